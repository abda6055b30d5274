"""The explicit registry from (capability, cloud) to builder and extras."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fnplatform.errors import InputError

Builder = Callable[..., Any]
F = TypeVar("F", bound=Callable[..., Any])

_BUILDERS: dict[tuple[str, str], Builder] = {}
_EXTRAS: dict[tuple[str, str], list[Builder]] = {}


def provides(capability: str, cloud: str) -> Callable[[F], F]:
    """Register the decorated function as ``cloud``'s builder for ``capability``."""

    def register(fn: F) -> F:
        if (capability, cloud) in _BUILDERS:
            msg = f"{cloud} already provides {capability}"
            raise ValueError(msg)
        _BUILDERS[(capability, cloud)] = fn
        return fn

    return register


def extra(capability: str, cloud: str) -> Callable[[F], F]:
    """Register the decorated function to run after ``cloud``'s ``capability`` builder."""

    def register(fn: F) -> F:
        _EXTRAS.setdefault((capability, cloud), []).append(fn)
        return fn

    return register


def clouds_for(capability: str) -> list[str]:
    """Clouds that provide ``capability``."""
    _load()
    return sorted(cloud for cap, cloud in _BUILDERS if cap == capability)


def provides_capability(capability: str, cloud: str | None) -> bool:
    """Whether ``cloud`` provides ``capability``: a composer can go on without it."""
    _load()
    return (capability, cloud or "") in _BUILDERS


def builder(capability: str, cloud: str | None, field: str = "spec.cloud") -> Builder:
    """``cloud``'s builder for ``capability``, or an InputError on the user's cloud ``field``."""
    _load()
    found = _BUILDERS.get((capability, cloud or ""))
    if found is None:
        supported = ", ".join(clouds_for(capability)) or "none"
        raise InputError(
            field,
            f"{cloud or 'unset'} cannot provide {capability}; supported clouds: {supported}",
        )
    return found


def extras(capability: str, cloud: str) -> list[Builder]:
    """The extras registered for ``capability`` on ``cloud``, in registration order."""
    _load()
    return list(_EXTRAS.get((capability, cloud), ()))


def _load() -> None:
    """Import the cloud modules, which register themselves."""
    import fnplatform.clouds  # noqa: F401
