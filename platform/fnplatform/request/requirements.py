"""Required resources (EnvironmentConfigs, flavors): declared every pass, read when fetched.

Crossplane calls the function again until the declared requirements stop changing, so each
pass declares the same requirements in the same way. A requirement absent from the request is
"not fetched yet"; present with no items is "fetched, nothing matched". Both the current
``required_resources`` and the deprecated ``extra_resources`` field are read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fnplatform.request.structs import struct_to_dict

ENVIRONMENT_CONFIG = ("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig")
CLAIM_NAME_LABEL = "crossplane.io/claim-name"
CLAIM_NAMESPACE_LABEL = "crossplane.io/claim-namespace"


@dataclass(frozen=True)
class Requirement:
    """A selector for resources Crossplane fetches for us."""

    key: str
    api_version: str
    kind: str
    match_name: str | None = None
    match_labels: tuple[tuple[str, str], ...] | None = None
    namespace: str | None = None  # for namespaced kinds (claims); None: cluster-scoped

    def selector(self) -> fnv1.ResourceSelector:
        """The protobuf selector."""
        selector = fnv1.ResourceSelector(api_version=self.api_version, kind=self.kind)
        if self.namespace is not None:
            selector.namespace = self.namespace
        if self.match_name is not None:
            selector.match_name = self.match_name
        else:  # no labels: every resource of the kind (set even when empty: the oneof)
            selector.match_labels.SetInParent()
            selector.match_labels.labels.update(dict(self.match_labels or ()))
        return selector

    def describe(self) -> str:
        """``EnvironmentConfig named baseline`` / ``EnvironmentConfig labelled a=b``."""
        if self.match_name is not None:
            return f"{self.kind} named {self.match_name!r}"
        labels = ",".join(f"{k}={v}" for k, v in self.match_labels or ())
        return f"{self.kind} labelled {labels}"


def claim_requirement(
    key: str, api_version: str, kind: str, claim_name: str, claim_namespace: str
) -> Requirement:
    """The composite (of ``api_version``/``kind``) behind the claim ``claim_namespace/claim_name``.

    Composites of claims have generated names; Crossplane labels them with their claim's
    name and namespace, which is what a claim-facing reference (a pool's name) can select by.
    """
    labels = ((CLAIM_NAME_LABEL, claim_name), (CLAIM_NAMESPACE_LABEL, claim_namespace))
    return Requirement(key, api_version, kind, match_labels=labels)


def namespaced_requirement(requirement: Requirement) -> Requirement:
    """``requirement`` as a namespaced composite asks it: a claim selector becomes a name.

    In the namespaced form there are no claims: what a user names (a pool) is the composite
    itself, named as its claim would have been, in that namespace. So a
    :func:`claim_requirement` selects by name in the claim's namespace instead; any other
    requirement is unchanged.
    """
    labels = dict(requirement.match_labels or ())
    if requirement.match_name is not None or set(labels) != {
        CLAIM_NAME_LABEL,
        CLAIM_NAMESPACE_LABEL,
    }:
        return requirement
    return replace(
        requirement,
        match_labels=None,
        match_name=labels[CLAIM_NAME_LABEL],
        namespace=labels[CLAIM_NAMESPACE_LABEL],
    )


def fetched(request: fnv1.RunFunctionRequest, key: str) -> list[dict[str, Any]] | None:
    """Fetched resources for ``key`` sorted by name, or None when not fetched yet."""
    for source in (request.required_resources, request.extra_resources):
        if key in source:
            items = [struct_to_dict(item.resource) for item in source[key].items]
            return sorted(items, key=_name)
    return None


def _name(resource: dict[str, Any]) -> str:
    """``metadata.name`` for sorting; a malformed resource (metadata not a map) sorts as ''."""
    metadata = resource.get("metadata")
    return str(metadata.get("name", "")) if isinstance(metadata, dict) else ""


def declare(response: fnv1.RunFunctionResponse, requirements: list[Requirement]) -> None:
    """Declare ``requirements`` on the response (each selector built once: every pass of a
    composite declares the same ones)."""
    for requirement in requirements:
        target = response.requirements.resources[requirement.key]
        target.Clear()
        target.MergeFromString(_selector_bytes(requirement))


@functools.lru_cache(maxsize=4096)
def _selector_bytes(requirement: Requirement) -> bytes:
    return requirement.selector().SerializeToString(deterministic=True)
