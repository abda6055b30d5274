"""Shared fixtures: one real function server per test session, and the schema catalog."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

# Every reused pass is composed again and compared (fnplatform.engine.reuse): the whole suite checks
# that reusing a pass never changes an answer. Set before fnplatform is imported, and
# inherited by every function server a test starts.
os.environ.setdefault("FNPLATFORM_VERIFY_REUSE", "1")

# What the function does at start (fnplatform.composers.composers): the clouds register on the
# capabilities, so tests calling a capability directly find every cloud's builder.
import fnplatform.clouds  # noqa: F401
import pytest

from tests.support.harness import FunctionClient, start_server
from tests.support.schemas import Catalog, load_catalog


@pytest.fixture(scope="session")
def client() -> Iterator[FunctionClient]:
    """A client of a function server started for this test session."""
    server, address = start_server()
    fn = FunctionClient(address)
    yield fn
    fn.close()
    server.stop()


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The offline schema catalog derived from the provider CRDs."""
    return load_catalog()


@pytest.fixture(scope="session")
def helm() -> Path:
    """The pinned Helm CLI, built once into .bin/ (tools/install-helm.sh): the chart's tests
    (tests/test_helm_chart.py) and the provider installs' (tests/test_provider_kubernetes_ssa.py)
    render deploy/helm-charts with it."""
    result = subprocess.run(
        [str(Path(__file__).resolve().parent.parent / "tools/install-helm.sh")],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return Path(result.stdout.strip().splitlines()[-1])
