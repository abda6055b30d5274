"""Import of existing infrastructure: ``spec.parameters.import``.

Observe mode adopts a resource read-only (``managementPolicies: ["Observe"]``). Manage mode
takes control of only what the user names: the adopted resource's ``forProvider`` keeps the
fields that say *where* it is (:data:`IDENTITY_FIELDS`) and those listed in
``import.resources.<name>.manage``; every other field the builder composed moves to
``initProvider``. upjet uses ``initProvider`` only to create a resource and drops the diffs of
fields found there alone on an existing one (``filterInitExclusiveDiffs`` in upjet's
Terraform plugin SDK client, ``preserveInitProviderExclusiveParams`` in its framework client),
so an adopted cluster keeps its own release channel, network profile and ranges instead of
being changed (or replaced) to the module's defaults; and the body still satisfies the CRDs'
required-parameter rules, which accept a field in either place. While importing,
``deletionPolicy: Orphan`` protects the real resource from a mistaken delete, and the
``crossplane.io/external-name`` annotation always names it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from fnplatform import fieldpath
from fnplatform.errors import InputError, closest, suggest
from fnplatform.merge import deep_merge

EXTERNAL_NAME = "crossplane.io/external-name"
#: ``forProvider`` fields that place a resource rather than configure it. upjet builds the
#: Terraform ID from them and the external name (GKE
#: ``projects/{project}/locations/{location}/clusters/{name}``, an EKS node group
#: ``{clusterName}:{name}``, AKS ``.../resourceGroups/{resourceGroupName}/...``), and the AWS
#: region picks the endpoint; a wrong location is refused as a replacement rather than applied.
#: Their ``*Ref``/``*Selector`` forms count too.
IDENTITY_FIELDS = frozenset(
    {
        "region",
        "location",
        "project",
        "zone",
        "resourceGroupName",
        "clusterName",
        "cluster",
        "kubernetesClusterId",
        "virtualNetworkName",
        "managedZone",
        "zoneName",
        "bucket",
    }
)
_REFERENCE_SUFFIXES = ("", "Ref", "Refs", "Selector")


def _managed_path(path: str) -> str:
    """A Crossplane field path of map keys only (an index can't be taken over alone).

    Refused while the spec is parsed, naming ``manage[<i>]``, rather than matching no composed
    field later.
    """
    segments = fieldpath.parse(fieldpath.user_path(path))
    at = next((i for i, segment in enumerate(segments) if isinstance(segment, int)), None)
    if at is not None:
        whole = fieldpath.to_string(segments[:at]) or path
        msg = (
            f"an index can't be taken over alone (paths go through maps only): take "
            f"{whole!r} over whole"
        )
        raise ValueError(msg)
    return path


#: One ``manage`` entry: checked as a Crossplane field path through maps.
ManagedPath = Annotated[str, AfterValidator(_managed_path)]


class ImportedResource(BaseModel):
    """One composed resource to adopt instead of create."""

    model_config = ConfigDict(extra="forbid")

    externalName: str = Field(min_length=1, description="The resource's name in the cloud.")  # noqa: N815
    manage: list[ManagedPath] = Field(
        default_factory=list,
        description=(
            "In manage mode, the spec.forProvider fields (Crossplane field paths through "
            "maps, such as releaseChannel, defaultNodePool.maxCount or "
            "tags[kubernetes.io/owner]) the platform takes over; the others stay as the "
            "resource has them."
        ),
    )


class ImportSpec(BaseModel):
    """``spec.parameters.import``."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(False, description="Adopt the listed resources.")
    mode: Literal["observe", "manage"] = Field(
        "observe", description="observe: read-only; manage: the fields listed in manage."
    )
    resources: dict[str, ImportedResource] = Field(
        default_factory=dict, description="Composed resource name to its external name."
    )
    include: list[str] = Field(
        default_factory=list,
        description=(
            "Composed resources to create inside the imported ones anyway (a node pool in an "
            "imported cluster, say), by name or shell-style pattern (pool-*); nothing else is "
            "created in them."
        ),
    )

    def imported(self, name: str) -> ImportedResource | None:
        """How composed resource ``name`` is imported: listed under ``resources`` while the
        import is enabled; None otherwise (a listed name is ignored while it is disabled)."""
        return self.resources.get(name) if self.enabled else None

    def external_name(self, name: str) -> str | None:
        """The cloud name ``name`` is imported as (what :func:`apply_import` annotates), or
        None when it is not imported. Builders ask :meth:`Composition.cloud_name`."""
        imported = self.imported(name)
        return imported.externalName if imported is not None else None

    def adopts(self, name: str, field: str | None = None) -> bool:
        """Whether ``name`` is imported with its own settings (``field`` of ``forProvider``, or
        all of them): observed, or managed without the user taking ``field`` over."""
        imported = self.imported(name)
        if imported is None:
            return False
        if self.mode == "observe" or field is None:
            return True
        fields = fieldpath.parse(field)
        return not any(
            fields[: len(path)] == path for path in map(fieldpath.parse, imported.manage)
        )

    def includes(self, name: str) -> bool:
        """Whether ``include`` opts composed resource ``name`` in (by name or pattern)."""
        return any(fnmatchcase(name, pattern) for pattern in self.include)

    def adopting(self) -> bool:
        """Whether existing resources are adopted (nothing is created inside them unasked)."""
        return self.enabled and bool(self.resources)


def check_import_names(spec: ImportSpec, composed: Iterable[str]) -> None:
    """Every ``import.resources`` name must be a resource this composite composes.

    A misspelt name would not adopt anything: the function would create a second resource
    beside the one meant to be imported. ``composed`` holds every name of this pass, held-back
    resources included, so a resource that only appears once its dependencies are ready counts.
    """
    if not spec.enabled:
        return
    known = sorted(set(composed))
    for name in sorted(spec.resources):
        if name not in known:
            raise InputError(
                f"spec.parameters.import.resources.{name[:63]}",
                f"no composed resource has this name; {suggest(name, known, 'names')}",
            )


def apply_import(
    spec: ImportSpec, name: str, body: dict[str, Any], managed: bool, field: str
) -> None:
    """Mark ``body`` (composed as ``name``) for import when the composite asks for it; ``field``
    is where the import settings came from, for errors."""
    imported = spec.imported(name)
    if imported is None:
        return
    annotations = body.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[EXTERNAL_NAME] = imported.externalName
    if not managed:
        return
    body_spec = body["spec"]
    if spec.mode == "observe":
        body_spec["managementPolicies"] = ["Observe"]
    else:  # the builder's policies (AKS leaves out LateInitialize), on the fields taken over
        body_spec.setdefault("managementPolicies", ["*"])
        _take_over(body_spec, imported.manage, f"{field}.resources.{name[:63]}.manage")
    body_spec["deletionPolicy"] = "Orphan"


def _take_over(body_spec: dict[str, Any], manage: list[str], field: str) -> None:
    """Keep identity fields and the ``manage`` paths in ``forProvider``; move the rest to
    ``initProvider`` (creation only, never applied to an existing resource)."""
    composed = body_spec.get("forProvider") or {}
    rest = copy.deepcopy(composed)
    kept = {key: rest.pop(key) for key in sorted(composed) if _is_identity(key)}
    for index, path in enumerate(manage):
        parts = _keys(path)
        if _is_identity(parts[0]):
            continue  # kept anyway
        if _value_at(composed, parts) is _MISSING:
            raise InputError(f"{field}[{index}]", _not_composed(path, composed))
        value = _pop_path(rest, parts)
        if value is not _MISSING:  # else inside a path named before
            _set_path(kept, parts, value)
    _prune(rest)
    body_spec["forProvider"] = kept
    if rest:
        body_spec["initProvider"] = deep_merge(rest, body_spec.get("initProvider") or {})


def _is_identity(key: str) -> bool:
    """Whether ``forProvider.<key>`` places the resource (see :data:`IDENTITY_FIELDS`)."""
    return any(
        key.endswith(s) and key[: len(key) - len(s)] in IDENTITY_FIELDS for s in _REFERENCE_SUFFIXES
    )


_MISSING = object()


def _value_at(node: Any, parts: list[str]) -> Any:
    """The value at ``parts`` (through maps only), or :data:`_MISSING`."""
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _pop_path(node: dict[str, Any], parts: list[str]) -> Any:
    """Remove and return the value at ``parts`` (through maps only), or :data:`_MISSING`."""
    for part in parts[:-1]:
        node = node.get(part)  # type: ignore[assignment]
        if not isinstance(node, dict):
            return _MISSING
    return node.pop(parts[-1], _MISSING)


def _set_path(node: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _prune(node: dict[str, Any]) -> None:
    """Drop maps left empty once managed fields were taken out of them."""
    for key in list(node):
        if isinstance(node[key], dict):
            _prune(node[key])
            if not node[key]:
                del node[key]


def _keys(path: str) -> list[str]:
    """The map keys of a ``manage`` path (Crossplane's syntax; validated to hold no index)."""
    return [segment for segment in fieldpath.parse(path) if isinstance(segment, str)]


def _not_composed(path: str, composed: dict[str, Any]) -> str:
    """Why ``path`` can't be taken over: it goes through a value that is not a map, or with
    the nearest composed path (else the top-level ones), written as Crossplane writes paths
    (a key with a period in brackets)."""
    parts = _keys(path)
    for end in range(len(parts) - 1, 0, -1):
        value = _value_at(composed, parts[:end])
        if value is not _MISSING and not isinstance(value, dict):
            prefix = fieldpath.to_string(tuple(parts[:end]))
            return f"{prefix!r} is not a map (paths go through maps only): take it over whole"
    written = fieldpath.to_string(tuple(parts))
    guess = closest(written, sorted(_paths(composed)))
    hint = f"did you mean {guess}?" if guess else f"composed here: {', '.join(sorted(composed))}"
    return f"{path!r} is not a field composed for this resource; {hint}"


def _paths(node: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterable[str]:
    """Every path through maps in ``node``, in Crossplane's syntax (for suggestions)."""
    for key, value in node.items():
        yield fieldpath.to_string((*prefix, key))
        if isinstance(value, dict):
            yield from _paths(value, (*prefix, key))
