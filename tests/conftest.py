"""Shared fixtures: one real function server per test session, and the schema catalog."""

from __future__ import annotations

from collections.abc import Iterator

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
