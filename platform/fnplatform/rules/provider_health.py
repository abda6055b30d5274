"""Provider health first: a new composite waits while the provider serving its ProviderConfig
is not Healthy.

A ProviderConfig (``aws.upbound.io``, ``gcp.upbound.io``, ``azure.upbound.io`` and their
``.m.`` twins) is served by its cloud's family provider (``provider-family-aws``, ``-gcp``,
``-azure``), which every service provider of the family depends on: Crossplane's package
manager installs it as a dependency (crossplane ``internal/controller/pkg``; a Provider
reports ``Installed`` and ``Healthy`` conditions). While it is not Healthy (a package that
cannot be pulled, a crash-looping controller, a revision whose runtime failed), nothing of
a new endpoint would be reconciled, and resources created then sit unreconciled with no
word on the claim. So a new composite asks Crossplane for the Providers (a required
resource) and waits, naming the provider, until it is Healthy; a composite whose resources
already exist keeps composing everything (nothing it has is ever dropped for this), and
the ``ProviderHealthy`` condition says what was found.

The provider is matched by its package's repository name, ``provider-family-<cloud>``,
whatever registry or organisation it is pulled from. A cluster where no Provider matches
(providers installed some other way, or a control plane without a package manager) is not
held back: the condition is Unknown, naming the package looked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.observation.resources import condition, condition_message, condition_true
from fnplatform.request.requirements import Requirement

CONDITION = "ProviderHealthy"
#: The requirement key of the Providers.
PROVIDERS = "providers"
PROVIDER = ("pkg.crossplane.io/v1", "Provider")


def family_package(cloud: str) -> str:
    """The repository name of the package serving ``cloud``'s ProviderConfig."""
    return f"provider-family-{cloud}"


def _repository(package: str) -> str:
    """``provider-family-aws`` of ``xpkg.crossplane.io/crossplane-contrib/provider-family-aws:v2``
    (a tag or a digest removed)."""
    path = package.split("@", 1)[0].rsplit("/", 1)[-1]
    return path.split(":", 1)[0]


def _serving(providers: list[dict[str, Any]], cloud: str) -> list[dict[str, Any]]:
    wanted = family_package(cloud)
    return [
        p
        for p in providers
        if isinstance(p.get("spec"), Mapping)
        and _repository(str(p["spec"].get("package", ""))) == wanted
    ]


def provider_health_first(comp: Composition, cloud: str, provider_config: str) -> None:
    """Wait (a new composite) or say (an existing one) while ``cloud``'s provider is unhealthy.

    Declares the Providers as a required resource every pass. Not fetched yet: a new
    composite composes nothing until they are (one more round).
    """
    found = comp.require(Requirement(PROVIDERS, *PROVIDER, match_labels=()))
    package = family_package(cloud)
    exists = bool(comp.observed)
    if found is None:
        if not exists:
            comp.not_yet(
                "WaitingForProvider",
                f"reading the health of the {package} "
                f"provider, which serves ProviderConfig {provider_config}",
            )
        return
    serving = _serving(found, cloud)
    if not serving:
        comp.condition(
            CONDITION,
            None,
            "ProviderNotFound",
            f"no Provider with package {package} (which serves ProviderConfig "
            f"{provider_config}) is installed; its health was not checked",
        )
        return
    unhealthy = [p for p in serving if not condition_true(p, "Healthy")]
    if not unhealthy:
        names = ", ".join(str(p["metadata"]["name"]) for p in serving)
        comp.condition(
            CONDITION,
            True,
            "Healthy",
            f"Provider {names} ({package}) serving ProviderConfig {provider_config} is Healthy",
        )
        return
    provider = unhealthy[0]
    name = str(provider["metadata"]["name"])
    why = (
        condition_message(provider, "Healthy")
        if condition(provider, "Healthy")
        else "Healthy not reported yet"
    )
    message = (
        f"Provider {name} ({package}), which serves ProviderConfig {provider_config}, "
        f"is not Healthy: {why}"
    )
    if exists:  # what exists keeps everything: nothing is dropped or held for this
        comp.condition(
            CONDITION,
            False,
            "ProviderNotHealthy",
            f"{message}; the endpoint's existing resources are kept as they are",
        )
        return
    comp.condition(CONDITION, False, "ProviderNotHealthy", message)
    comp.not_yet("WaitingForProvider", f"nothing is created until then: {message}")
