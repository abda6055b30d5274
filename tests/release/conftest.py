"""The release tests (make test-release; docs/release.md)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Release tests run only when asked for (-m release, as make test-release does): they
    debootstrap a base (cached under .bin/) and build a whole release, which `make test` and a
    bare pytest leave to CI's `make test-release`."""
    if "release" not in (config.getoption("-m") or ""):
        release = [i for i in items if i.get_closest_marker("release")]
        if release:
            config.hook.pytest_deselected(items=release)
            items[:] = [i for i in items if not i.get_closest_marker("release")]
