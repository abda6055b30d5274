"""Shared fixtures: one real function server per test session, and the schema catalog; and
the hook that prints a failing table row's reason (tests/support/table.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Generator, Iterator
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
from tests.support.table import WHY, reasons


def pytest_configure(config: pytest.Config) -> None:
    """Register the mark a table row's reason travels in (the suite runs --strict-markers)."""
    config.addinivalue_line(
        "markers", f"{WHY}(reason): why a table row exists, printed when it fails"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing row of a table says why it exists: its reason (tests/support/table.py)
    becomes a "why this row" section of the failure report, under the traceback."""
    report = yield
    why = reasons(item)
    if report.failed and why:
        text = "\n".join(why)
        add = getattr(report.longrepr, "addsection", None)
        if add is not None:
            add("why this row", text)
        else:  # a failure reported as plain text (a skip-like or collection-style longrepr)
            report.sections.append(("why this row", text))
    return report


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
