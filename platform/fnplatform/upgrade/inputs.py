"""The composites to preview and what each one's render needs, from a cluster or an export.

What a render needs is what Crossplane gives the function on a reconcile, the same inputs
crossplane-diff's ``comp`` command fetches for each composite it re-renders
(https://github.com/crossplane-contrib/crossplane-diff, cmd/diff/client/crossplane): the
composite itself with its status (the function's memory of what exists), the Composition it
names, its XRD, its composed resources as they are observed (``resourceRefs``, the
``crossplane.io/composite`` label, the controller reference), and the resources the function
may require: EnvironmentConfigs, the platform settings the modules read (ConfigMaps, Providers,
Usages, other composites) and the connection Secrets the composed resources write, which the
engine reads their connection details from.

A cluster is read through ``kubectl`` (:func:`from_cluster`): it speaks every authentication
plugin a kubeconfig names (exec credentials, OIDC, cloud CLIs), which a Python client would
have to reimplement, and it is what a platform team already has. An export (:func:`read_export`)
is the same objects as ``kubectl get ... -o yaml`` writes them: a ``List``, a YAML stream, or
several of each, so a preview runs offline on what ``--save-export`` wrote.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Body = dict[str, Any]

COMPOSITION_RESOURCE_NAME = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
CROSSPLANE_GROUP = "apiextensions.crossplane.io"
#: Crossplane's own objects that describe APIs, not what a composite reads.
API_KINDS = frozenset({"Composition", "CompositionRevision", "CompositeResourceDefinition"})
#: What the modules require besides composites (``fnplatform.request.requirements``,
#: ``fnplatform.rules.provider_health``, the async actor's runtime ConfigMap, the OpenStack pools'
#: Usages), as ``kubectl get`` names them: (resource, namespaced).
REQUIRED_RESOURCES: tuple[tuple[str, bool], ...] = (
    ("environmentconfigs.apiextensions.crossplane.io", False),
    ("providers.pkg.crossplane.io", False),
    ("configmaps", True),
    ("usages.protection.crossplane.io", True),
    ("clusterusages.protection.crossplane.io", False),
)
KUBECTL_TIMEOUT_S = 120


class BadInputError(Exception):
    """Input the preview cannot read; the message names what and why, in one line."""


@dataclass(frozen=True)
class Composite:
    """One composite to preview and everything its render reads."""

    body: Body
    composition: Body
    definition: Body | None
    observed: tuple[Body, ...]
    required: tuple[Body, ...]
    #: ``resourceRefs`` of the composite found neither in the cluster nor the export.
    missing: tuple[str, ...] = ()

    @property
    def namespaced(self) -> bool:
        """A Crossplane v2 namespaced composite (else a v1 cluster-scoped one)."""
        return bool(self.metadata.get("namespace"))

    @property
    def metadata(self) -> Body:
        return dict(self.body.get("metadata") or {})

    @property
    def label(self) -> str:
        """``Kind/name``, ``Kind/namespace/name`` for a namespaced composite."""
        where = f"{self.metadata['namespace']}/" if self.namespaced else ""
        return f"{self.body['kind']}/{where}{self.metadata.get('name')}"

    @property
    def claim(self) -> str | None:
        """``namespace/name`` of the claim behind a v1 composite, if any."""
        labels = self.metadata.get("labels") or {}
        name = labels.get("crossplane.io/claim-name")
        return f"{labels.get('crossplane.io/claim-namespace')}/{name}" if name else None


def group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _type(body: Mapping[str, Any]) -> tuple[str, str]:
    """(group, kind): a composite's type whatever version it was read at."""
    return group_of(str(body.get("apiVersion", ""))), str(body.get("kind", ""))


def _items(documents: Iterable[Any], where: str) -> Iterator[Body]:
    """Every object of ``documents``, a ``*List``'s items in its place."""
    for document in documents:
        if document is None:
            continue
        if isinstance(document, dict) and str(document.get("kind", "")).endswith("List"):
            yield from _items(document.get("items") or [], where)
            continue
        if (
            not isinstance(document, dict)
            or not document.get("apiVersion")
            or not document.get("kind")
        ):
            raise BadInputError(f"{where}: holds something that is not a Kubernetes object")
        yield document


def read_export(path: Path) -> list[Body]:
    """The objects of an export: ``kubectl get ... -o yaml`` output (a ``List``), a YAML
    stream, or both; JSON reads as YAML."""
    if not path.is_file():
        raise BadInputError(f"{path}: no such file")
    try:
        documents = list(yaml.safe_load_all(path.read_text()))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise BadInputError(f"{path}: not YAML ({str(error).splitlines()[0]})") from None
    return list(_items(documents, str(path)))


def _runs(composition: Mapping[str, Any], function_name: str) -> bool:
    pipeline = (composition.get("spec") or {}).get("pipeline") or []
    return any((step.get("functionRef") or {}).get("name") == function_name for step in pipeline)


def function_compositions(documents: Sequence[Body], function_name: str) -> list[Body]:
    """The Compositions with a pipeline step running ``function_name``."""
    return [
        d
        for d in documents
        if _type(d) == (CROSSPLANE_GROUP, "Composition") and _runs(d, function_name)
    ]


def _composition_name(composite: Mapping[str, Any]) -> str | None:
    spec = composite.get("spec") or {}
    fields = spec.get("crossplane") or spec  # v2 keeps Crossplane's fields under spec.crossplane
    return ((fields.get("compositionRef") or {}).get("name")) or None


def resource_refs(composite: Mapping[str, Any]) -> list[Body]:
    spec = composite.get("spec") or {}
    return list((spec.get("crossplane") or spec).get("resourceRefs") or [])


def _controlled_by(resource: Mapping[str, Any], composite: Mapping[str, Any]) -> bool:
    """Whether ``resource`` is a composed resource of ``composite``: its controller reference
    names the composite's uid, else (an export without uids) its ``crossplane.io/composite``
    label names the composite, in the composite's namespace for a namespaced one."""
    metadata = resource.get("metadata") or {}
    if COMPOSITION_RESOURCE_NAME not in (metadata.get("annotations") or {}):
        return False
    mine = composite.get("metadata") or {}
    for ref in metadata.get("ownerReferences") or []:
        if ref.get("controller") and mine.get("uid") and ref.get("uid"):
            return bool(ref["uid"] == mine["uid"])
    if (metadata.get("labels") or {}).get(COMPOSITE_LABEL) != mine.get("name"):
        return False
    return not mine.get("namespace") or metadata.get("namespace") == mine["namespace"]


def _key(body: Mapping[str, Any]) -> tuple[str, str, str, str]:
    metadata = body.get("metadata") or {}
    group, kind = _type(body)
    return group, kind, str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def inventory(documents: Sequence[Body], function_name: str, where: str) -> list[Composite]:
    """Every composite of ``documents`` composed by a Composition that runs ``function_name``,
    with its inputs; in kind, namespace, name order."""
    compositions = function_compositions(documents, function_name)
    if not compositions:
        raise BadInputError(
            f"{where}: no Composition runs the function {function_name!r} "
            "(an export needs the Compositions too: --save-export writes them)"
        )
    by_name = {str(c["metadata"]["name"]): c for c in compositions}
    every_composition = {
        str(d["metadata"]["name"])
        for d in documents
        if _type(d) == (CROSSPLANE_GROUP, "Composition")
    }
    types = {_type((c.get("spec") or {}).get("compositeTypeRef") or {}): c for c in compositions}
    definitions = {
        (str(d["spec"]["group"]), str(d["spec"]["names"]["kind"])): d
        for d in documents
        if _type(d) == (CROSSPLANE_GROUP, "CompositeResourceDefinition")
    }
    # a composite composed by another composite is reconciled through its own Composition too
    candidates = [d for d in documents if _type(d) in types]
    composites = []
    for body in sorted(candidates, key=_key):
        named = _composition_name(body)
        if named in by_name:
            composition = by_name[str(named)]
        elif named in every_composition:
            continue  # its Composition does not run this function
        else:  # none named (yet), or not there: the one of its type that runs the function
            same_type = [
                c for c in compositions if _type(c["spec"]["compositeTypeRef"]) == _type(body)
            ]
            if len(same_type) != 1:
                label = f"{body['kind']}/{body.get('metadata', {}).get('name')}"
                raise BadInputError(
                    f"{where}: {label} names no Composition there (spec.compositionRef: "
                    f"{named}) and {len(same_type)} Compositions running the function compose "
                    "its type"
                )
            composition = same_type[0]
        observed = [d for d in documents if _controlled_by(d, body)]
        found = {(_type(d)[1], _key(d)[3]) for d in observed}
        missing = [
            f"{ref.get('kind')}/{ref.get('name')}"
            for ref in resource_refs(body)
            if (ref.get("kind"), ref.get("name")) not in found
        ]
        own = {_key(d) for d in observed}
        required = [
            d
            for d in documents
            if _key(d) not in own
            and _type(d) != _type(body)
            and not (_type(d)[0] == CROSSPLANE_GROUP and d.get("kind") in API_KINDS)
        ]
        composites.append(
            Composite(
                body=body,
                composition=composition,
                definition=definitions.get(_type(body)),
                observed=tuple(sorted(observed, key=_key)),
                required=tuple(required),
                missing=tuple(missing),
            )
        )
    return composites


# -- reading a cluster ------------------------------------------------------------------------


@dataclass(frozen=True)
class Kubectl:
    """``kubectl`` against one kubeconfig (and context)."""

    binary: str
    kubeconfig: Path
    context: str | None = None

    @classmethod
    def find(cls, binary: str | None, kubeconfig: Path, context: str | None) -> Kubectl:
        found = shutil.which(binary or "kubectl")
        if found is None:
            raise BadInputError(
                f"{binary or 'kubectl'}: not found (give its path with --kubectl, or export "
                "the cluster and preview with --from)"
            )
        if not kubeconfig.is_file():
            raise BadInputError(f"{kubeconfig}: no such kubeconfig")
        return cls(found, kubeconfig, context)

    def get(self, resource: str, *args: str, optional: bool = False) -> list[Body]:
        """The objects ``kubectl get <resource> <args> -o json`` lists; ``optional``: none
        when the cluster does not serve the resource (a CRD not installed)."""
        command = [self.binary, f"--kubeconfig={self.kubeconfig}"]
        if self.context:
            command.append(f"--context={self.context}")
        command += ["get", resource, *args, "-o", "json"]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=KUBECTL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise BadInputError(
                f"kubectl get {resource}: no answer within {KUBECTL_TIMEOUT_S} s "
                f"(is the cluster of {self.kubeconfig} reachable?)"
            ) from None
        if result.returncode != 0:
            reason = _kubectl_reason(result.stderr)
            if optional and "the server doesn't have a resource type" in reason:
                return []
            raise BadInputError(f"kubectl get {resource}: {reason}")
        # one name asked for gives the object, several a List; --ignore-not-found with
        # nothing found prints nothing (or an empty object)
        listed = json.loads(result.stdout) if result.stdout.strip() else {}
        return list(_items([listed], f"kubectl get {resource}")) if listed else []


def _kubectl_reason(stderr: str) -> str:
    """The line of kubectl's stderr that says what went wrong (the last ``error:``/``Error``
    line, else the last line), without its ``E1128 ... memcache.go`` retry noise."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if line.lower().startswith(("error", "unable to connect"))]
    return (said or lines or ["exited non-zero"])[-1]


def _resource_of(api_version: str, kind: str) -> str:
    """How ``kubectl get`` names a kind of an API version: ``Kind.version.group``."""
    group = group_of(api_version)
    version = api_version.rsplit("/", 1)[-1]
    return f"{kind}.{version}.{group}" if group else kind


def from_cluster(kubectl: Kubectl, function_name: str) -> list[Body]:
    """What the preview of every composite of ``function_name`` reads, fetched from the
    cluster: the Compositions and XRDs, the composites of every XRD a Composition running the
    function composes (v1 cluster-scoped ones behind claims and v2 namespaced ones), their
    composed resources, the resources the function requires, and the composed resources'
    connection Secrets."""
    compositions = kubectl.get("compositions.apiextensions.crossplane.io")
    definitions = kubectl.get("compositeresourcedefinitions.apiextensions.crossplane.io")
    ours = function_compositions(compositions, function_name)
    documents: list[Body] = [*compositions, *definitions]
    plurals = {
        (str(d["spec"]["group"]), str(d["spec"]["names"]["kind"])): str(
            d["spec"]["names"]["plural"]
        )
        for d in definitions
    }
    composites: list[Body] = []
    for group, kind in sorted({_type(c["spec"]["compositeTypeRef"]) for c in ours}):
        plural = plurals.get((group, kind))
        resource = f"{plural}.{group}" if plural else f"{kind}.{group}"
        composites += kubectl.get(resource, "--all-namespaces", optional=True)
    documents += composites
    kinds = sorted(
        {(str(r["apiVersion"]), str(r["kind"])) for c in composites for r in resource_refs(c)}
    )
    composed: list[Body] = []
    for api_version, kind in kinds:
        composed += kubectl.get(
            _resource_of(api_version, kind),
            "--all-namespaces",
            "-l",
            COMPOSITE_LABEL,
            optional=True,
        )
    documents += composed
    for resource, namespaced in REQUIRED_RESOURCES:
        args = ("--all-namespaces",) if namespaced else ()
        documents += kubectl.get(resource, *args, optional=True)
    documents += connection_secrets(kubectl, composed)
    return _unique(documents)


def connection_secrets(kubectl: Kubectl, composed: Sequence[Body]) -> list[Body]:
    """The Secrets the composed resources write their connection details to
    (``spec.writeConnectionSecretToRef``), by name, per namespace."""
    wanted: dict[str, set[str]] = {}
    for body in composed:
        ref = (body.get("spec") or {}).get("writeConnectionSecretToRef") or {}
        namespace = ref.get("namespace") or (body.get("metadata") or {}).get("namespace")
        if ref.get("name") and namespace:
            wanted.setdefault(str(namespace), set()).add(str(ref["name"]))
    found: list[Body] = []
    for namespace, names in sorted(wanted.items()):
        found += kubectl.get("secrets", "-n", namespace, *sorted(names), "--ignore-not-found")
    return found


def _unique(documents: Iterable[Body]) -> list[Body]:
    """Each object once (a kind listed twice: a composite that is also composed)."""
    seen: dict[tuple[str, str, str, str], Body] = {}
    for document in documents:
        seen.setdefault(_key(document), document)
    return list(seen.values())


def write_export(documents: Sequence[Body], path: Path) -> None:
    """``documents`` as one ``v1 List``, the form ``kubectl get -o yaml`` writes, which
    :func:`read_export` reads back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    listed = {"apiVersion": "v1", "kind": "List", "items": list(documents)}
    path.write_text(yaml.safe_dump(listed, sort_keys=False))
