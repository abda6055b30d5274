"""The composition view of one RunFunction request.

A composer receives a :class:`Composition`: the composite (name, labels, namespace, spec), the
merged environment, observed resources by name, and the desired state it builds by calling
:meth:`Composition.emit` (usually through the agnostic ``add_*`` calls). The composer says where
things go (:meth:`Composition.place`), which user tags apply (:meth:`Composition.tag_with`) and
what to import (:meth:`Composition.import_from`); every shared concern applied to an emitted
resource (naming, tags, provider config, import, policies) is then applied here, once.

Imported by composers, cloud builders, the library and the rules; imports only the
observation, api and request packages and the shared vocabulary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fnplatform.api.phase import Phase
from fnplatform.api.step_input import Input
from fnplatform.api.validation import parse
from fnplatform.composition.namespaced import to_namespaced
from fnplatform.errors import InputError, NotYet
from fnplatform.gaps import Gap
from fnplatform.holds import CONNECTION_DETAILS, READY, Hold, Wait
from fnplatform.importing import EXTERNAL_NAME, ImportSpec, apply_import
from fnplatform.kinds import kind_of
from fnplatform.merge import deep_merge, get_path
from fnplatform.naming import dns_label
from fnplatform.observation.resources import ObservedResources
from fnplatform.placement import UNPLACED, Placement, Sourced
from fnplatform.request.requirements import Requirement, fetched, namespaced_requirement
from fnplatform.request.structs import struct_to_dict
from fnplatform.tagging import TagStyle, render_tags

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
    """What the response carries besides resources: status, conditions, results."""

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


class Composition:
    """Everything a composer reads, and the desired state it writes."""

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
        self.relocated_secrets: set[tuple[str, str]] = set()  # (namespace, name) now local
        self.composed_provider_configs: set[tuple[str, str]] = set()  # (provider, name)
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
        self._user_tags: dict[str, str] = {}
        self._provider_configs: dict[str, str] = {}
        # What tags() and provider_config() answer, worked out once per pass: every emitted
        # resource asks again (emit), and nothing they read changes but through
        # tag_with / use_provider_configs, which forget them.
        self._tags: dict[str, str] | None = None
        self._tags_in: dict[TagStyle, dict[str, str]] = {}
        self._configs_by_provider: dict[str, str] = {}

    # -- what the composer decides ------------------------------------------------------

    def place(
        self,
        cloud: str | None,
        *,
        cloud_field: str,
        region: str | None = None,
        region_field: str = "spec.region",
        scope: str | None = None,
        scope_field: str = "environment",
    ) -> None:
        """Say where this composite's cloud resources go, and which user field said so.

        ``scope`` is the AWS account, GCP project or Azure resource group. Builders read these
        through :attr:`cloud`, :attr:`region` and :attr:`scope`; a missing one is an error on
        its field when a builder needs it, never a silent default.
        """
        self.placement = Placement(
            Sourced(cloud, cloud_field), Sourced(region, region_field), Sourced(scope, scope_field)
        )

    @property
    def cloud(self) -> str | None:
        """The cloud the composer placed this composite on (None before :meth:`place`)."""
        return self.placement.cloud.value

    @property
    def region(self) -> str:
        """The placed region; an InputError on the user's region field when unset."""
        return self.placement.region.value or self.placement.required(
            "region", "the region to create resources in"
        )

    @property
    def scope(self) -> str:
        """The placed account, project or resource group; an InputError when unset."""
        return self.placement.scope.value or self.placement.required(
            "scope", f"the {self.cloud or 'cloud'} scope to use"
        )

    def use_provider_configs(self, **by_provider: str) -> None:
        """ProviderConfig names by provider (``aws=...``, ``kubernetes=...``) that a module's
        own settings name; they win over the environment's ``providerConfigs.<provider>``."""
        self._provider_configs.update(by_provider)
        self._configs_by_provider.clear()

    def tag_with(self, tags: Mapping[str, Any] | None, field: str) -> None:
        """User tags (from ``field``) layered over platform and environment tags."""
        if tags is None:
            return
        if not isinstance(tags, Mapping):
            raise InputError(field, "must be a map of tag names to values")
        self._user_tags.update({str(k): str(v) for k, v in tags.items()})
        self._tags = None
        self._tags_in.clear()

    def import_from(self, raw: Any, field: str) -> None:
        """Adopt existing resources as ``raw`` (an :class:`ImportSpec`) says; errors on
        ``field``."""
        self.import_spec = parse(ImportSpec, raw or {}, field)
        self.import_field = field

    # -- reading --------------------------------------------------------------------------

    def observed_value(self, name: str, path: str, default: Any = None) -> Any:
        """A field of the observed composed resource ``name``, or ``default``."""
        return self.observed.field(name, path, default)

    def observed_string(self, name: str, path: str) -> str | None:
        """An observed field as text (an id, an address, a version), None while unset or empty:
        what a value reports once the provider has it."""
        value = self.observed_value(name, path)
        return str(value) if value else None

    def recorded(self, status_field: str) -> Any:
        """What an earlier reconcile recorded in the composite's ``status.<status_field>``
        (:meth:`remember`), None when nothing was: the function's memory of what exists."""
        return get_path(self.composite, f"status.{status_field}")

    def refuse_change(
        self, field: str, recorded: Any, wanted: Any, reason: str, *, exists: bool = True
    ) -> None:
        """Refuse changing what exists and can't change in place: an InputError on ``field``
        with ``reason`` (what the change would do, what to do instead) when something
        ``exists`` with a ``recorded`` value (status, or observed) that ``wanted`` differs
        from. Nothing recorded, nothing wanted, or nothing there yet: no refusal."""
        if exists and wanted is not None and recorded not in (None, "") and recorded != wanted:
            raise InputError(field, reason)

    def global_name(
        self, name: str, derive: Callable[[str], str], *, in_metadata: bool = True
    ) -> str:
        """The cloud-global name of composed resource ``name`` (a bucket, a key ring, a storage
        account): the one the existing resource has, else ``derive`` of
        :attr:`global_name_base`.

        A resource that exists is never renamed (a new name is a new resource, and some names
        outlive theirs). ``in_metadata``: the kind's ``metadata.name`` is the cloud name
        (:meth:`kept_metadata_name`); else its external name (:meth:`observed_external_name`).
        """
        kept = self.kept_metadata_name(name) if in_metadata else self.observed_external_name(name)
        return kept or derive(self.global_name_base)

    def cloud_name(self, name: str, default: str) -> str:
        """The name the cloud knows composed resource ``name`` by: the external name it is
        imported as (``spec.parameters.import``, what :func:`~fnplatform.importing.apply_import`
        annotates), else ``default``, the one its builder gives it (a spec's name, a derived
        one).

        One rule for every value that names a resource before reading it back (an EKS
        cluster's name in IAM policies, a storage account's, a service account's email), so
        none of them names the composed resource while the import adopts another.
        """
        return self.import_spec.external_name(name) or default

    @property
    def uid_suffix(self) -> str:
        """8 hex digits of this composite's uid (dashes dropped): one composite, not its name.

        A composite without a uid (a render of a manifest never applied) gets 8 hex digits of
        the SHA-256 of ``<namespace>/<name>`` instead, so the output stays deterministic.
        """
        return self.uid_hex(f"{self.namespace or ''}/{self.name}")

    def uid_hex(self, fallback: str) -> str:
        """8 hex digits of the composite's uid (dashes dropped), else of the SHA-256 of
        ``fallback`` when it has no uid.

        :attr:`uid_suffix` is this with ``<namespace>/<name>``; a composer whose names were
        seeded differently before (the environment: its name alone) passes its own fallback
        so names it already gave stay the same.
        """
        uid = str((self.composite.get("metadata") or {}).get("uid") or "").replace("-", "")
        seed = uid or hashlib.sha256(fallback.encode()).hexdigest()
        return seed[:UID_SUFFIX_LENGTH]

    @property
    def global_name_base(self) -> str:
        """What cloud-global names (S3 and GCS buckets, KMS key rings, Azure storage accounts
        and vaults) derive from: names unique across a whole cloud, some outliving their
        resource (a kept bucket, a KMS ring that can never be deleted, a soft-deleted vault).

        A cluster-scoped composite's name carries Crossplane's random suffix (a claim
        ``orders`` gets ``orders-x7k2p``): the name itself, so a re-created claim gets new
        names. A namespaced composite has the user's own name, which a re-created composite
        reuses: ``<name>-<8 hex of its uid>`` (:attr:`uid_suffix`), so it never meets what its
        predecessor left. Name functions prefer :meth:`observed_external_name`: a resource that
        exists keeps its name whatever this says.
        """
        return f"{self.name}-{self.uid_suffix}" if self.namespaced else self.name

    def observed_external_name(self, name: str) -> str | None:
        """The cloud name of observed composed resource ``name``: its
        ``crossplane.io/external-name`` annotation, else its ``metadata.name``; None when not
        observed.

        Name functions of stateful resources return it before deriving one, so a resource that
        exists is never renamed (which would replace it) when the derivation changes.
        """
        if name not in self.observed:
            return None
        # Field reads, not the body: the body changes with every write (resourceVersion), these
        # only when the name does (fnplatform.engine.reuse).
        external = self.observed.field(name, f"metadata.annotations[{EXTERNAL_NAME}]")
        value = (
            external
            if isinstance(external, str) and external
            else self.observed.field(name, "metadata.name")
        )
        return value if isinstance(value, str) and value else None

    def kept_metadata_name(self, name: str) -> str | None:
        """For kinds whose ``metadata.name`` is the cloud name (S3 and GCS buckets, KMS key
        rings): the name existing composed resource ``name`` keeps, None when not observed.

        Its :meth:`observed_external_name`, except for an imported one: there the import's
        annotation names the adopted resource and ``metadata.name`` stays the composed one.
        """
        if self.import_spec.adopts(name):
            value = self.observed_value(name, "metadata.name")
            return value if isinstance(value, str) and value else None
        return self.observed_external_name(name)

    def is_observed(self, name: str) -> bool:
        """Whether composed resource ``name`` exists."""
        return name in self.observed

    def is_ready(self, name: str) -> bool:
        """Whether composed resource ``name`` reports Ready=True."""
        return self.observed.condition_true(name)

    def pending(self, parts: Mapping[str, Iterable[str]]) -> list[str]:
        """The parts (a label -> its composed names) that are not Ready yet, in order.

        A part is pending while one of its resources is composed or held back and not Ready.
        A resource neither composed nor held (a cloud that can't provide it: a CapabilityGap
        condition says so) is not waited for. Every module reports its parts with this.
        """
        wanted = set(self.desired) | set(self.notes.held)
        return [
            part
            for part, names in parts.items()
            if any(name in wanted and not self.is_ready(name) for name in names)
        ]

    def remember(self, status_field: str, value: Any) -> Any:
        """Write ``status.<status_field>``: ``value``, else the one already saved there.

        Status is the function's memory across reconciles: a value read once (a queue URL, a
        cluster endpoint) stays usable, and stays on the claim, while its source is briefly
        unobserved. Desired status is applied as a whole, so a field not written would vanish.
        """
        if value is None:
            value = get_path(self.composite, f"status.{status_field}")
        self.set_status(status_field, value)
        return value

    def require(self, requirement: Requirement) -> list[dict[str, Any]] | None:
        """Declare ``requirement``; its fetched resources, or None when not fetched yet.

        A namespaced composite asks for a claim's composite by name instead (see
        :func:`fnplatform.request.requirements.namespaced_requirement`).
        """
        if self.namespaced:
            requirement = namespaced_requirement(requirement)
        self.requirements.append(requirement)
        return fetched(self.request, requirement.key)

    # -- writing --------------------------------------------------------------------------

    def ref(self, name: str) -> dict[str, str]:
        """A provider ``*Ref`` to composed resource ``name``, resolved by the provider, which
        refuses a reference to nothing (rule REFERENCES_RESOLVE,
        platform/providersim/simulation.py).

        Its emitted ``metadata.name`` when already desired (a caller may have named it),
        else the deterministic name it will get, so referencing never waits on observed IDs.
        """
        emitted = self.desired.get(name)
        if emitted is not None:
            return {"name": str(emitted.body["metadata"]["name"])}
        return {"name": self.resource_name(name)}

    def resource_name(self, name: str) -> str:
        """The deterministic ``metadata.name`` of composed resource ``name``."""
        return dns_label(self.name, name)

    def emit(
        self,
        name: str,
        body: dict[str, Any],
        *,
        uses: Iterable[str] = (),
        reasons: Mapping[str, str] | None = None,
        external_name: str | None = None,
        provider_config: str | None = None,
        ready: bool | None = None,
    ) -> dict[str, Any]:
        """Add a composed resource to desired state and return its body.

        ``uses`` names the composed resources this one needs: it is held back until they
        exist and a Usage orders their deletion; ``reasons`` may say why, per used name, for
        the Usage. A caller-set ``metadata.name`` is kept.
        """
        if name in self.desired:
            msg = f"composed resource {name!r} emitted twice"
            raise ValueError(msg)
        kind = kind_of(body)
        metadata = body.setdefault("metadata", {})
        if "name" not in metadata:
            metadata["name"] = dns_label(self.name, name)  # resource_name(name)
        if external_name is not None:
            metadata.setdefault("annotations", {})[EXTERNAL_NAME] = external_name
        if kind.managed:
            spec = body["spec"]
            if "providerConfigRef" not in spec:
                spec["providerConfigRef"] = {"name": provider_config or self.provider_config(kind)}
        if kind.tag_style is not None:
            for_provider = body["spec"].setdefault("forProvider", {})
            own = for_provider.get(kind.tags_field) or {}
            for_provider[kind.tags_field] = {**self._rendered_tags(kind.tag_style), **own}
        if self.import_spec.enabled:
            apply_import(self.import_spec, name, body, kind.managed, self.import_field)
        if self.namespaced and not to_namespaced(self, name, body, kind):
            return body  # no namespaced twin: named in the NamespacedForm condition
        self.desired[name] = Emitted(
            name,
            body,
            uses if type(uses) is tuple else tuple(uses),
            ready,
            dict(reasons) if reasons else {},
        )
        return body

    def provider_config(self, kind: Any) -> str:
        """The ProviderConfig for ``kind``'s provider, one rule for every module: what the
        composer set (:meth:`use_provider_configs`), else environment
        ``providerConfigs.<provider>``, else ``default``."""
        found = self._configs_by_provider.get(kind.provider)
        if found is None:
            configured = self._provider_configs.get(kind.provider) or get_path(
                self.env, f"providerConfigs.{kind.provider}"
            )
            found = self._configs_by_provider[kind.provider] = str(configured or "default")
        return found

    def tags(self) -> dict[str, str]:
        """Platform tags for every cloud resource: who owns it, then environment and user tags.

        ``crossplane-claim`` is ``<namespace>.<name>`` of what the user created: the claim of a
        cluster-scoped composite, or the namespaced composite itself. A new dict each time:
        the caller may change it.
        """
        if self._tags is None:
            base = {"crossplane-composite": self.name, "platform-module": self.step.module}
            if self.claim_name and self.namespace:
                base["crossplane-claim"] = f"{self.namespace}.{self.claim_name}"
            env_tags = self.env.get("tags") or {}
            if not isinstance(env_tags, Mapping):
                raise InputError("environment.tags", "must be a map of tag names to values")
            self._tags = {
                **base,
                **{str(k): str(v) for k, v in env_tags.items()},
                **self._user_tags,
            }
        return dict(self._tags)

    def tags_in(self, style: TagStyle) -> dict[str, str]:
        """:meth:`tags` in the form ``style`` accepts (:func:`~fnplatform.tagging.render_tags`),
        worked out once per style and pass: every tagged resource asks. A new dict each time."""
        return dict(self._rendered_tags(style))

    def _rendered_tags(self, style: TagStyle) -> dict[str, str]:
        """:meth:`tags_in` without the copy: for callers that copy it themselves (emit)."""
        found = self._tags_in.get(style)
        if found is None:
            found = self._tags_in[style] = render_tags(style, self.tags())
        return found

    def set_status(self, path: str, value: Any) -> None:
        """Write ``status.<path>`` of the composite, only when ``value`` is known."""
        if value is None:
            return
        target = self.notes.status
        *parents, leaf = path.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value

    def set_phase(self, phase: Phase) -> None:
        """Write ``status.phase`` in the one vocabulary every module shares (:class:`Phase`)."""
        self.set_status("phase", phase.value)

    def status_from(self, name: str, path: str, to: str) -> Any:
        """Copy an observed field of ``name`` into ``status.<to>``, remembered while unobserved."""
        return self.remember(to, self.observed_value(name, path))

    def condition(self, type_: str, ok: bool | None, reason: str, message: str = "") -> None:
        """Set a custom condition on the composite and its claim."""
        status = {
            True: fnv1.STATUS_CONDITION_TRUE,
            False: fnv1.STATUS_CONDITION_FALSE,
            None: fnv1.STATUS_CONDITION_UNKNOWN,
        }[ok]
        cond = fnv1.Condition(
            type=type_, status=status, reason=reason, target=fnv1.TARGET_COMPOSITE_AND_CLAIM
        )
        if message:
            cond.message = message
        self.notes.conditions.append(cond)

    def event(self, message: str, *, warning: bool = False, reason: str = "") -> None:
        """Emit an event on the composite and its claim."""
        severity = fnv1.SEVERITY_WARNING if warning else fnv1.SEVERITY_NORMAL
        result = fnv1.Result(
            severity=severity, message=message, target=fnv1.TARGET_COMPOSITE_AND_CLAIM
        )
        if reason:
            result.reason = reason
        self.notes.results.append(result)

    def publish(self, key: str, value: bytes | str | None) -> None:
        """Publish connection detail ``key`` of the composite (a v1 claim's Secret gets it).

        Only values Crossplane already holds as connection details or status (a kubeconfig
        the provider wrote): the function passes them on, it never makes secrets up.
        """
        if value:
            self.notes.connection[key] = value.encode() if isinstance(value, str) else value

    def keep_on_delete(self, name: str) -> None:
        """Leave the cloud resource of emitted ``name`` in place when the composite is deleted.

        ``deletionPolicy: Orphan``: Crossplane deletes the managed resource, not what it
        manages, so deleting the composite finishes and the data stays. Namespaced managed
        resources (Crossplane v2) have no ``deletionPolicy``: every management policy but
        ``Delete`` says the same there.
        """
        spec = self.desired[name].body["spec"]
        if self.namespaced:
            # A builder's own narrower policies (no LateInitialize) stay narrow.
            own = [p for p in spec.get("managementPolicies") or ["*"] if p not in ("*", "Delete")]
            spec["managementPolicies"] = own or ["Observe", "Create", "Update", "LateInitialize"]
        else:
            spec["deletionPolicy"] = "Orphan"

    def hold(self, name: str, *waits_for: Wait) -> None:
        """Don't create ``name`` yet: it waits for ``waits_for`` (replacing an earlier hold)."""
        self.notes.held[name] = Hold(waits_for)

    # -- dependencies and outcomes ------------------------------------------------------

    def needs(self, name: str, path: str, *, by: str, remember: str | None = None) -> Any:
        """An observed field ``path`` of ``name`` that ``by`` can't be composed without.

        Returns the value, or None after recording that ``by`` waits for it (the Composed
        condition says so); the caller then doesn't emit ``by``. With ``remember`` the value
        is kept in ``status.<remember>`` and used while its source is briefly unobserved.
        """
        value = self.observed_value(name, path)
        if value in ("", [], {}):
            value = None
        if remember is not None:
            value = self.remember(remember, value)
        if value is None:
            self.hold(by, Wait(name, path))
        return value

    def setting_of(
        self, name: str, field: str, composed: Any, *, by: str, observed: str | None = None
    ) -> Any:
        """A setting (``forProvider.<field>``) of composed resource ``name`` that ``by`` derives
        from: a range, a version.

        The ``composed`` value, unless ``name`` is adopted with its own settings (imported,
        and ``field`` not taken over, see :mod:`fnplatform.importing`): then the value observed
        at ``observed`` (default ``status.atProvider.<field>``), and None while ``by`` waits
        for it, like :meth:`needs`.
        """
        if not self.import_spec.adopts(name, field):
            return composed
        return self.needs(name, observed or f"status.atProvider.{field}", by=by)

    def needs_ready(self, name: str, *, by: str) -> bool:
        """Whether ``by`` may be composed: ``name`` reports Ready, or ``by`` already exists.

        For what existing isn't enough for: a Helm release whose hook Jobs need a schedulable
        node waits for a node pool that is Ready, not just created. False records the hold (the
        Composed condition says so) and the caller doesn't emit ``by``; an existing ``by`` is
        never held back (dropping it would delete it).
        """
        if self.is_ready(name) or by in self.observed:
            return True
        self.hold(by, Wait(name, READY))
        return False

    def needs_connection(self, name: str, *, by: str) -> dict[str, bytes] | None:
        """The observed connection details of ``name``, or None while ``by`` waits for them.

        Use it to hold back what would crash without the secret; never copy the values.
        """
        details = self.observed.connection_details(name)
        if not details:
            self.hold(by, Wait(name, CONNECTION_DETAILS))
            return None
        return details

    def protect(
        self, fetched: Mapping[str, Any], *, by: str | None, reason: str, as_name: str | None = None
    ) -> None:
        """Keep a fetched resource (a required resource) while this composite uses it.

        A Usage whose ``of`` is ``fetched`` and whose ``by`` is composed resource ``by`` (or,
        without one, just ``reason``): Crossplane refuses to delete ``fetched`` meanwhile.
        ``as_name`` names the Usage instead of ``fetched``'s own (generated) name, so it is the
        same whichever composite of a claim, or namespaced twin, was fetched.
        """
        self.notes.protected.append((dict(fetched), by, reason, as_name))

    def gap(self, feature: Gap, message: str) -> None:
        """Say that the placed cloud can't provide ``feature``: a condition, not an error."""
        self.notes.gaps[feature] = message

    def not_yet(self, reason: str, message: str, *, condition: str = "Composed") -> NoReturn:
        """Stop here without failing: keep what exists, say why with a False condition."""
        raise NotYet(reason, message, condition)
