"""The namespaced form: what a Crossplane v2 namespaced composite composes instead.

One composer serves both forms. A composite with ``metadata.namespace`` is a v2 namespaced XR
(apiextensions v2 XRD, ``scope: Namespaced``); it can only compose namespaced resources in its
own namespace (Crossplane forces the namespace and refuses cluster-scoped composed resources).
So, for every resource the composer emits, :func:`to_namespaced` rewrites the body once in
:meth:`fnplatform.composition.Composition.emit`:

* the kind becomes its namespaced twin (:func:`fnplatform.kinds.namespaced_twin`), and
  ``metadata.namespace`` the composite's;
* ``providerConfigRef`` gets its ``kind``: ``ProviderConfig`` for a ProviderConfig this
  composite composes, else environment ``providerConfigKind`` (one value, or a map by provider:
  ``{aws: ProviderConfig}``), default ``ClusterProviderConfig`` (the providers' own default);
* ``deletionPolicy`` (gone from namespaced managed resources) becomes ``managementPolicies``:
  ``Orphan`` keeps every policy but ``Delete``;
* ``writeConnectionSecretToRef`` loses its namespace: the Secret is written to the composite's
  namespace, and references to it (a ProviderConfig's ``secretRef``) follow in
  :func:`settle_secret_refs`, which also drops the ``namespace`` of Secret references whose
  namespaced schema has none (the provider reads them from the resource's namespace).

What the namespaced form can't express is never dropped silently: a kind without a namespaced
twin, a Secret reference into another namespace, a ProviderConfig that is now only usable in
one namespace, are collected in ``notes.unexpressed`` and reported by the runner as the
``NamespacedForm`` condition, naming each.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fnplatform.composition.state import CompositionState
from fnplatform.errors import InputError
from fnplatform.kinds import Kind, namespaced_twin
from fnplatform.merge import get_path
from fnplatform.namespaced_kinds import NAMESPACE_DROPPED

CONDITION = "NamespacedForm"
PROVIDER_CONFIG_KIND = "providerConfigKind"
PROVIDER_CONFIG_KINDS = ("ClusterProviderConfig", "ProviderConfig")
#: ``managementPolicies`` that orphan the external resource on deletion (all but ``Delete``).
ALL_BUT_DELETE = ("Observe", "Create", "Update", "LateInitialize")


def to_namespaced(comp: CompositionState, name: str, body: dict[str, Any], kind: Kind) -> bool:
    """Rewrite ``body`` (of registered ``kind``) for a namespaced composite, in place.

    Returns False when the namespaced form can't hold it at all (no namespaced twin): the
    caller leaves it out, and the ``NamespacedForm`` condition names it.
    """
    twin = namespaced_twin(kind)
    if isinstance(twin, str):
        comp.notes.unexpressed[name] = f"{kind.api_version} {kind.kind} not composed: {twin}"
        return False
    body["apiVersion"], body["kind"] = twin.api_version, twin.kind
    body["metadata"]["namespace"] = comp.namespace
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return True
    ref = spec.get("providerConfigRef")
    if kind.managed and isinstance(ref, dict) and "kind" not in ref:
        ref_name = str(ref.get("name"))
        spec["providerConfigRef"] = {
            "kind": provider_config_kind(comp, kind.provider, ref_name),
            "name": ref_name,
        }
    if "deletionPolicy" in spec:
        _orphan_by_policies(spec)
    secret = spec.get("writeConnectionSecretToRef")
    if isinstance(secret, dict) and "namespace" in secret:
        comp.notes.relocated_secrets.add((str(secret["namespace"]), str(secret.get("name"))))
        spec["writeConnectionSecretToRef"] = {"name": secret.get("name")}
    if kind.kind == "ProviderConfig" and twin.kind == "ProviderConfig":
        comp.notes.composed_provider_configs.add((kind.provider, str(body["metadata"]["name"])))
        comp.notes.unexpressed[name] = (
            f"{twin.api_version} ProviderConfig {body['metadata']['name']} is namespaced: only "
            f"resources in namespace {comp.namespace} can use it (the cluster-scoped form's "
            "ProviderConfig was usable from every namespace)"
        )
    return True


def provider_config_kind(comp: CompositionState, provider: str, name: str) -> str:
    """``ProviderConfig`` for one this composite composes, else the environment's choice."""
    if (provider, name) in comp.notes.composed_provider_configs:
        return "ProviderConfig"
    configured = comp.env.get(PROVIDER_CONFIG_KIND)
    field = f"environment.{PROVIDER_CONFIG_KIND}"
    if isinstance(configured, Mapping):
        configured = configured.get(provider)
        field = f"{field}.{provider}"
    if configured is None:
        return "ClusterProviderConfig"
    if configured not in PROVIDER_CONFIG_KINDS:
        raise InputError(field, f"must be one of {', '.join(PROVIDER_CONFIG_KINDS)}")
    return str(configured)


def _orphan_by_policies(spec: dict[str, Any]) -> None:
    """``deletionPolicy: Orphan`` as namespaced managed resources say it: no ``Delete``."""
    if spec.pop("deletionPolicy") != "Orphan":
        return
    policies = spec.get("managementPolicies") or ["*"]
    if "*" in policies:
        policies = list(ALL_BUT_DELETE)
    spec["managementPolicies"] = [p for p in policies if p != "Delete"]


def settle_secret_refs(comp: CompositionState) -> None:
    """Point Secret references of the namespaced form at the composite's namespace.

    Runs once everything is emitted, so a reference to a connection Secret another resource
    writes is recognised whatever the emission order. A reference into any other namespace
    can't be expressed by a namespaced resource: kept where the schema still allows a
    namespace (a ProviderConfig's ``secretRef``), dropped where it doesn't, named either way.
    """
    for emitted in comp.desired.values():
        body = emitted.body
        key = (str(body.get("apiVersion")), str(body.get("kind")))
        for path in NAMESPACE_DROPPED.get(key, ()):
            for ref in _objects_at(body, path):
                namespace = ref.pop("namespace", None)
                if namespace and not _local(comp, str(namespace), ref):
                    comp.notes.unexpressed[f"{emitted.name} {path}"] = (
                        f"Secret {namespace}/{ref.get('name')} is read from namespace "
                        f"{comp.namespace} in the namespaced form"
                    )
        if key[1] != "ProviderConfig":
            continue
        secret_ref = get_path(body, "spec.credentials.secretRef")
        if isinstance(secret_ref, dict):
            namespace = str(secret_ref.get("namespace") or "")
            if _local(comp, namespace, secret_ref):
                secret_ref["namespace"] = comp.namespace
            else:
                comp.notes.unexpressed[f"{emitted.name} spec.credentials.secretRef"] = (
                    f"reads Secret {namespace}/{secret_ref.get('name')} across namespaces"
                )


def _local(comp: CompositionState, namespace: str, ref: Mapping[str, Any]) -> bool:
    """Whether a Secret reference resolves in the composite's namespace in the namespaced form."""
    secret = (namespace, str(ref.get("name")))
    return namespace == comp.namespace or secret in comp.notes.relocated_secrets


def _objects_at(node: Any, path: str) -> Iterator[dict[str, Any]]:
    """The maps at ``path`` (``a.b[].c``: every item of list ``b``) inside ``node``."""
    head, _, rest = path.partition(".")
    is_list = head.endswith("[]")
    child = node.get(head.removesuffix("[]")) if isinstance(node, dict) else None
    children = child if is_list and isinstance(child, list) else [child]
    for item in children:
        if not rest:
            if isinstance(item, dict):
                yield item
        elif item is not None:
            yield from _objects_at(item, rest)


def unexpressed_summary(unexpressed: Mapping[str, str]) -> str:
    """``name: why; ...`` sorted, for the condition message."""
    return "; ".join(f"{subject}: {why}" for subject, why in sorted(unexpressed.items()))
