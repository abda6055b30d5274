"""What a :class:`~fnplatform.composition.Composition` holds, and the reads every concern shares.

:class:`CompositionState` is built once per pass from the request: the composite (name, labels,
namespace, spec), the merged environment, observed resources by name, and the desired state
and notes the composer fills. Each concern of the composition (names, status memory, waiting,
emitting) is a class of its own module that inherits this one, so it is typed against exactly
these attributes and never against the whole :class:`~fnplatform.composition.Composition`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fnplatform.api.step_input import Input
from fnplatform.gaps import Gap
from fnplatform.holds import Hold
from fnplatform.importing import ImportSpec
from fnplatform.merge import deep_merge
from fnplatform.observation.resources import ObservedResources
from fnplatform.placement import UNPLACED, Placement
from fnplatform.request.requirements import Requirement
from fnplatform.request.structs import struct_to_dict
from fnplatform.tagging import TagStyle

CLAIM_NAMESPACE = "crossplane.io/claim-namespace"
CLAIM_NAME = "crossplane.io/claim-name"
#: Hex digits of the composite's uid that tell two composites of one namespace and name apart.
UID_SUFFIX_LENGTH = 8


@dataclass
class Emitted:
    """A desired composed resource and what it depends on."""

    name: str
    body: dict[str, Any]
    uses: tuple[str, ...] = ()
    ready: bool | None = None  # an explicit readiness; None derives it from observed state
    reasons: dict[str, str] = field(default_factory=dict)  # used name -> why (Usage reason)


@dataclass
class Notes:
    """What a pass records besides resources: what the response carries (status, conditions,
    results, connection details), and what the rules after the composer read back."""

    status: dict[str, Any] = field(default_factory=dict)
    conditions: list[fnv1.Condition] = field(default_factory=list)
    results: list[fnv1.Result] = field(default_factory=list)
    held: dict[str, Hold] = field(default_factory=dict)  # resource name -> what it waits for
    #: The composite's own connection details (v1 composites publish them to the claim).
    connection: dict[str, bytes] = field(default_factory=dict)
    #: (fetched resource, user, reason, stable name of what is protected or None)
    protected: list[tuple[dict[str, Any], str | None, str, str | None]] = field(
        default_factory=list
    )
    gaps: dict[Gap, str] = field(default_factory=dict)  # feature -> why the cloud can't
    unexpressed: dict[str, str] = field(default_factory=dict)  # what the namespaced form can't
    #: What the namespaced form (:mod:`fnplatform.composition.namespaced`) did to emitted
    #: bodies, read back by later ones and by its finishing step: connection Secrets now written
    #: in the composite's namespace, by (namespace, name) they named before; and the
    #: ProviderConfigs the composite composes, by (provider, name).
    relocated_secrets: set[tuple[str, str]] = field(default_factory=set)
    composed_provider_configs: set[tuple[str, str]] = field(default_factory=set)


class CompositionState:
    """Everything a composer reads, and the desired state it writes: the attributes, and the
    reads of observed resources that names, status and waits all make."""

    def __init__(
        self,
        request: fnv1.RunFunctionRequest,
        step: Input,
        environment: Mapping[str, Any],
        composite: dict[str, Any] | None = None,
        observed: ObservedResources | None = None,
    ) -> None:
        self.request = request
        self.step = step
        self.composite: dict[str, Any] = (
            composite
            if composite is not None
            else struct_to_dict(request.observed.composite.resource)
        )
        metadata = self.composite.get("metadata") or {}
        self.name: str = str(metadata.get("name") or "composite")
        self.labels: dict[str, str] = dict(metadata.get("labels") or {})
        own_namespace = metadata.get("namespace")
        #: A Crossplane v2 namespaced composite (``metadata.namespace`` set): it composes the
        #: namespaced twin of every kind, in its own namespace (see
        #: :mod:`fnplatform.composition.namespaced`).
        #: Otherwise a v1 cluster-scoped composite, usually bound to a claim.
        self.namespaced: bool = isinstance(own_namespace, str) and bool(own_namespace)
        #: The namespace the user works in, and the name they gave: the composite's own for a
        #: namespaced composite, its claim's (from the claim labels) for a cluster-scoped one.
        self.namespace: str | None = (
            own_namespace if self.namespaced else self.labels.get(CLAIM_NAMESPACE)
        )
        self.claim_name: str | None = self.name if self.namespaced else self.labels.get(CLAIM_NAME)
        self.spec: dict[str, Any] = dict(self.composite.get("spec") or {})
        self.env: dict[str, Any] = deep_merge(step.settings, environment)
        #: Every read of observed composed resources goes through this (a pass is reused
        #: while they answer the same: :mod:`fnplatform.engine.reuse`).
        self.observed = (
            observed if observed is not None else ObservedResources(request.observed.resources)
        )
        self.desired: dict[str, Emitted] = {}
        self.notes = Notes()
        self.requirements: list[Requirement] = []
        self.placement: Placement = UNPLACED
        self.import_spec = ImportSpec()
        self.import_field = "spec.parameters.import"
        # What the composer said about tags and provider configs (:mod:`.emit`: tag_with,
        # use_provider_configs), and what they answer, read by every emitted resource.
        self._user_tags: dict[str, str] = {}
        self._provider_configs: dict[str, str] = {}
        # What tags() and provider_config() answer, worked out once per pass: every emitted
        # resource asks again (emit), and nothing they read changes but through
        # tag_with / use_provider_configs, which forget them.
        self._tags: dict[str, str] | None = None
        self._tags_in: dict[TagStyle, dict[str, str]] = {}
        self._configs_by_provider: dict[str, str] = {}

    def observed_value(self, name: str, path: str, default: Any = None) -> Any:
        """A field of the observed composed resource ``name``, or ``default``."""
        return self.observed.field(name, path, default)

    def observed_string(self, name: str, path: str) -> str | None:
        """An observed field as text (an id, an address, a version), None while unset or empty:
        what a value reports once the provider has it."""
        value = self.observed_value(name, path)
        return str(value) if value else None

    def is_observed(self, name: str) -> bool:
        """Whether composed resource ``name`` exists."""
        return name in self.observed

    def is_ready(self, name: str) -> bool:
        """Whether composed resource ``name`` reports Ready=True."""
        return self.observed.condition_true(name)
