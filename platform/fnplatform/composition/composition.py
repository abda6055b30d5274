"""The composition view of one RunFunction request: :class:`Composition`.

A composer receives a :class:`Composition`: the composite (name, labels, namespace, spec), the
merged environment, observed resources by name, and the desired state it builds by calling
:meth:`Composition.emit` (usually through the agnostic ``add_*`` calls). The composer says where
things go (:meth:`Composition.place`), which user tags apply (:meth:`Composition.tag_with`) and
what to import (:meth:`Composition.import_from`); every shared concern applied to an emitted
resource (naming, tags, provider config, import, policies) is then applied here, once.

The class is its concerns put together, each in a module of its own and typed against
:class:`~fnplatform.composition.state.CompositionState` alone: :mod:`.names`, :mod:`.status`,
:mod:`.waiting`, :mod:`.emit`. What stays here is where things go, what the composite requires,
and what it reports (conditions, events, connection details, gaps, protections).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fnplatform.composition.emit import Emitting
from fnplatform.composition.names import Naming
from fnplatform.composition.waiting import Waiting
from fnplatform.errors import NotYet
from fnplatform.gaps import Gap
from fnplatform.placement import Placement, Sourced
from fnplatform.request.requirements import Requirement, fetched, namespaced_requirement


class Composition(Emitting, Naming, Waiting):
    """Everything a composer reads, and the desired state it writes."""

    # -- where things go ------------------------------------------------------------------

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

    # -- what the composite requires and reports -------------------------------------

    def require(self, requirement: Requirement) -> list[dict[str, Any]] | None:
        """Declare ``requirement``; its fetched resources, or None when not fetched yet.

        A namespaced composite asks for a claim's composite by name instead (see
        :func:`fnplatform.request.requirements.namespaced_requirement`).
        """
        if self.namespaced:
            requirement = namespaced_requirement(requirement)
        self.requirements.append(requirement)
        return fetched(self.request, requirement.key)

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
