"""Emitting desired resources: every shared concern applied to a body, once.

:meth:`Emitting.emit` names the body, sets its provider config (:meth:`Emitting.provider_config`)
and tags (:meth:`Emitting.tags`), applies the import (:func:`~fnplatform.importing.apply_import`)
and, for a namespaced composite, the namespaced form
(:func:`~fnplatform.composition.namespaced.to_namespaced`), then records it in ``desired``. The
composer says beforehand which user tags apply (:meth:`Emitting.tag_with`), which provider
configs its settings name (:meth:`Emitting.use_provider_configs`) and what to import
(:meth:`Emitting.import_from`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.api.validation import parse
from fnplatform.composition.namespaced import to_namespaced
from fnplatform.composition.state import CompositionState, Emitted
from fnplatform.errors import InputError
from fnplatform.importing import EXTERNAL_NAME, ImportSpec, apply_import
from fnplatform.kinds import kind_of
from fnplatform.merge import get_path
from fnplatform.naming import dns_label
from fnplatform.tagging import TagStyle, render_tags


class Emitting(CompositionState):
    """Desired resources, with their names, tags, provider configs, import and form."""

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
