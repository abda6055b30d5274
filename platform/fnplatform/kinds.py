"""What the library knows about each kind it emits: one registry, declared by the cloud modules.

A kind's traits decide the shared concerns applied to every resource of that kind: where its
tags go and in which form, whether it is a Crossplane managed resource (``providerConfigRef``,
management and deletion policies), whether losing it loses data, and how its readiness is read.

Each kind is also decided here for both scopes. A cluster-scoped (v1) composite emits the kind
as registered; a namespaced (Crossplane v2) composite can only compose namespaced resources, so
it emits the kind's namespaced twin (:func:`namespaced_twin`: ``*.m.upbound.io``,
``kubernetes.m.crossplane.io``, ``helm.m.crossplane.io``, ``Usage`` for ``ClusterUsage``) at the
served version whose schema takes the same body, from the table
:mod:`fnplatform.namespaced_kinds` that ``tools/derive_namespaced_kinds.py`` derives
from the
upstream CRDs. A twin carries the traits of the kind it stands for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import cached_property
from typing import Any

from fnplatform.namespaced_kinds import NAMESPACED, NO_TWIN, TWINS
from fnplatform.tagging import TagStyle


class Readiness(Enum):
    """How a composed resource's readiness is derived from its observed state."""

    CONDITION = "condition"  # observed Ready condition is True
    EXISTS = "exists"  # it exists in observed state (ProviderConfigs have no conditions)


@dataclass(frozen=True)
class Kind:
    """A kind the library can emit, with the traits the shared concerns need."""

    api_version: str
    kind: str
    tag_style: TagStyle | None = None
    tags_field: str = "tags"  # key under spec.forProvider holding tags or labels
    managed: bool = True  # a Crossplane managed resource with providerConfigRef
    stateful: bool = False  # deleting it loses data: never dropped on a transient problem
    readiness: Readiness = Readiness.CONDITION
    #: For a kind applied inside a provider-kubernetes Object: the Object's ``spec.readiness``
    #: that tells when this kind is ready (a Shoot has no Ready condition, say).
    object_readiness: tuple[tuple[str, str], ...] | None = None

    @cached_property
    def provider(self) -> str:
        """The provider the kind belongs to (``aws``, ``gcp``, ``kubernetes``, ``helm``...),
        the key of environment ``providerConfigs.<provider>``."""
        group = self.api_version.split("/")[0].replace(".m.", ".")
        parts = group.split(".")
        return parts[-3] if len(parts) >= 3 else parts[0]

    def new(self, for_provider: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
        """A body of this kind: ``forProvider`` plus any other top-level spec fields."""
        body_spec: dict[str, Any] = {}
        if for_provider is not None:
            body_spec["forProvider"] = for_provider
        body_spec.update(spec)
        return {"apiVersion": self.api_version, "kind": self.kind, "spec": body_spec}


#: Every management policy but ``LateInitialize``, for a managed resource whose unset fields
#: the cloud changes after creation (a zone after failover, rules added beside it): upjet would
#: copy them into ``forProvider`` and then enforce them against the cloud (docs/drift.md).
WITHOUT_LATE_INITIALIZE = ("Observe", "Create", "Update", "Delete")


def connection_secret_ref(name: str, namespace: str) -> dict[str, str]:
    """A managed resource's ``writeConnectionSecretToRef``: the Secret its provider writes the
    connection details to (a cluster's kubeconfig, a database's endpoint and password)."""
    return {"name": name, "namespace": namespace}


_KINDS: dict[tuple[str, str], Kind] = {}


def register(api_version: str, kind: str, **traits: Any) -> Kind:
    """Declare a kind once, at import of the module that emits it."""
    declared = Kind(api_version, kind, **traits)
    existing = _KINDS.get((api_version, kind))
    if existing is not None and existing != declared:
        msg = f"{api_version} {kind} declared twice with different traits"
        raise ValueError(msg)
    _KINDS[(api_version, kind)] = declared
    twin = TWINS.get((api_version, kind))
    if twin is not None:  # readiness, statefulness... read a twin's body by its own key
        _KINDS.setdefault(twin, replace(declared, api_version=twin[0], kind=twin[1]))
    return declared


def registered() -> tuple[Kind, ...]:
    """Every kind declared so far, twins included, in declaration order.

    For tools that list what the modules can compose (``tools/make_activation_policy.py``
    activates exactly the managed ones); call it after :func:`fnplatform.composers.composers`
    has imported every module that declares kinds.
    """
    return tuple(_KINDS.values())


def namespaced_twin(kind: Kind) -> Kind | str:
    """The kind a namespaced composite emits for ``kind``, or why it can't emit one.

    An already namespaced kind (a ScaledObject, a Ceph pool) is its own twin; so is a kind the
    upstream CRDs don't know (it is the caller's to get right, and schema tests check it).
    """
    key = (kind.api_version, kind.kind)
    registered = _KINDS.get(key) is kind
    found = _TWIN_OF.get(key) if registered else None
    if found is None:
        twin = None if key in NAMESPACED else TWINS.get(key)
        if twin is not None:
            found = replace(kind, api_version=twin[0], kind=twin[1])
        else:
            found = kind if key in NAMESPACED else NO_TWIN.get(key) or kind
        if registered:
            _TWIN_OF[key] = found  # every emit asks: decide each registered kind once
    return found


_TWIN_OF: dict[tuple[str, str], Kind | str] = {}


def kind_of(body: dict[str, Any]) -> Kind:
    """The declared traits of ``body``; undeclared kinds are unmanaged and stateless."""
    api_version, kind = body.get("apiVersion", ""), body.get("kind", "")
    if type(api_version) is not str or type(kind) is not str:  # every emitted body has strs
        api_version, kind = str(api_version), str(kind)
    return _KINDS.get((api_version, kind)) or Kind(api_version, kind, managed=False)


def wrapped_kind(body: dict[str, Any]) -> Kind | None:
    """The declared traits of the manifest a provider-kubernetes Object wraps, if any."""
    manifest = ((body.get("spec") or {}).get("forProvider") or {}).get("manifest")
    if not isinstance(manifest, dict):
        return None
    return _KINDS.get((str(manifest.get("apiVersion", "")), str(manifest.get("kind", ""))))


def is_stateful(body: dict[str, Any]) -> bool:
    """Whether losing ``body`` loses data (buckets, queues, databases, pools, Shoots): its own
    kind's trait, or for an Object, the trait of the kind it wraps (a Namespace, a Shoot)."""
    if kind_of(body).stateful:
        return True
    wrapped = wrapped_kind(body)
    return wrapped is not None and wrapped.stateful
