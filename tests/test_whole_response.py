"""Each module's whole RunFunctionResponse for a few requests, compared whole.

The other module tests assert chosen fields; these rows pin everything the function answers
(desired composite and composed resources with their readiness, conditions, results,
requirements, context, ``meta`` with its TTL), as crossplane/function-template-python's table
test compares the whole ``RunFunctionResponse``: each row is a reason, a request (a small
composite of the module with the EnvironmentConfigs and resources Crossplane fetches for it,
from tests/support/cases.py) and the expected response in
``tests/whole-response/<module>/<case>.yaml``. Every request goes over gRPC to the production
server (the session ``client``). A mismatch fails with a unified diff of the two YAML texts;
``UPDATE_GOLDEN=1`` rewrites the files (as for the render goldens), to be read in ``git diff``.

Three rows a module: the first pass (nothing observed yet), the converged state (every desired
resource observed Ready, as after the first reconciles: the steady answer Crossplane gets every
TTL), and a bad input, which must be one fatal result naming the field and no composed
resource dropped or invented.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format

from tests.support.cases import (
    ModuleCase,
    async_actor_case,
    cluster_case,
    cluster_composite,
    contact_center_case,
    each_pass,
    environment_case,
    fulfil,
    openstack_pool_case,
    published,
)
from tests.support.harness import FunctionClient
from tests.support.table import case, reasons

HERE = Path(__file__).resolve().parent / "whole-response"
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"

Request = Callable[[FunctionClient], fnv1.RunFunctionRequest]


def first_pass(module_case: ModuleCase) -> Request:
    """The request of a composite seen for the first time: nothing observed yet, the
    EnvironmentConfigs its step input names already fetched."""
    return lambda _client: module_case.request()


def converged(module_case: ModuleCase) -> Request:
    """The request once every resource the function desired exists and is Ready, as the
    providers report it (platform/providersim/simulation.py), with what it required fetched: passes
    are made against the server until the desired set stops growing (cases.each_pass)."""

    def build(client: FunctionClient) -> fnv1.RunFunctionRequest:
        fetched = module_case.fetched()
        for rendered, observed in each_pass(client.run, module_case, 12):
            last, seen = rendered, observed
            fetched = {**fetched, **fulfil(rendered, {**module_case.required, **fetched})}
        assert not last.fatal, f"{module_case.id} does not converge: {last.fatal}"
        return module_case.request(
            observed=seen, required=fetched, connection=published(module_case, seen)
        )

    return build


def broken(module_case: ModuleCase, variant: str) -> Request:
    """The first-pass request with one of the case's invalid variants applied
    (cases.Invalid: a mutation of the composite or the step input)."""
    (invalid,) = [v for v in module_case.invalid if v.name == variant]
    composite, step = copy.deepcopy(module_case.composite), module_case.step()
    invalid.mutate(composite, step)
    return lambda _client: module_case.request(composite=composite, input=step)


#: A GCP cluster of one pool: the smallest cluster that still composes a node pool.
SMALL_CLUSTER = cluster_case("gcp").with_composite(cluster_composite("gcp", pools=1))
ASYNC_ACTOR = async_actor_case()
CONTACT_CENTER = contact_center_case("aws")
ENVIRONMENT = environment_case("aws")
OPENSTACK_POOL = openstack_pool_case()


@dataclass(frozen=True)
class Row:
    """Where a row's expected response lives and how its request is made."""

    module: str
    name: str
    request: Request

    @property
    def expected(self) -> Path:
        return HERE / self.module / f"{self.name}.yaml"


ROWS = [
    case(
        "a GCP cluster's first pass: only what waits for nothing (network, node identity, public "
        "zone), none Ready; the Composed condition names each wait; the short TTL",
        Row("cluster", "first-pass", first_pass(SMALL_CLUSTER)),
        id="cluster/first-pass",
    ),
    case(
        "a converged GCP cluster: every resource Ready, the status reported (endpoint, CA, OIDC "
        "issuer), the long TTL of a Ready composite",
        Row("cluster", "converged", converged(SMALL_CLUSTER)),
        id="cluster/converged",
    ),
    case(
        "a domain that is no DNS name is one fatal result naming spec.parameters.domain, "
        "with nothing composed and the short TTL",
        Row("cluster", "bad-domain", broken(SMALL_CLUSTER, "bad-domain")),
        id="cluster/bad-domain",
    ),
    case(
        "an async actor's first pass: the dead-letter queue, service account and trigger auth, "
        "the rest waiting for them",
        Row("async-actor", "first-pass", first_pass(ASYNC_ACTOR)),
        id="async-actor/first-pass",
    ),
    case(
        "a converged async actor: queue, deployment and scaler Ready with their Usages, the "
        "queue's URL and identifier in status",
        Row("async-actor", "converged", converged(ASYNC_ACTOR)),
        id="async-actor/converged",
    ),
    case(
        "an actor name that is no DNS label is one fatal result naming spec.actor",
        Row("async-actor", "bad-actor", broken(ASYNC_ACTOR, "bad-actor")),
        id="async-actor/bad-actor",
    ),
    case(
        "an AWS contact center's first pass: networks, keys and failover in both regions, what "
        "needs nothing else first; the compliance controls already reported",
        Row("contact-center", "first-pass", first_pass(CONTACT_CENTER)),
        id="contact-center/first-pass",
    ),
    case(
        "a converged AWS contact center: every resource Ready, recordings bucket, key and "
        "endpoints in status",
        Row("contact-center", "converged", converged(CONTACT_CENTER)),
        id="contact-center/converged",
    ),
    case(
        "a region the platform does not allow is one fatal result naming spec.region and "
        "listing the allowed ones",
        Row("contact-center", "region-not-allowed", broken(CONTACT_CENTER, "region-not-allowed")),
        id="contact-center/region-not-allowed",
    ),
    case(
        "an AWS environment's first pass: the namespace, site bucket and database networking, "
        "none Ready, status saying what is pending",
        Row("environment", "first-pass", first_pass(ENVIRONMENT)),
        id="environment/first-pass",
    ),
    case(
        "a converged AWS environment: everything Ready, the database host, backend service and "
        "CDN domain in status",
        Row("environment", "converged", converged(ENVIRONMENT)),
        id="environment/converged",
    ),
    case(
        "a backend without an image is one fatal result naming spec.backend.image",
        Row("environment", "no-image", broken(ENVIRONMENT, "no-image")),
        id="environment/no-image",
    ),
    case(
        "an OpenStack hypervisor pool's first pass: the Shoot and its access service account and "
        "role, none Ready",
        Row("openstack", "first-pass", first_pass(OPENSTACK_POOL)),
        id="openstack/first-pass",
    ),
    case(
        "a converged hypervisor pool: the Shoot Ready, the access refresher and the "
        "ProviderConfig for the tenants on it, each held by a Usage",
        Row("openstack", "converged", converged(OPENSTACK_POOL)),
        id="openstack/converged",
    ),
    case(
        "a pool without a region is one fatal result naming spec.region",
        Row("openstack", "no-region", broken(OPENSTACK_POOL, "no-region")),
        id="openstack/no-region",
    ),
]


def as_yaml(response: fnv1.RunFunctionResponse) -> str:
    """The whole response as YAML: protobuf's JSON mapping (every field set, bytes base64),
    keys sorted so the same response is the same text."""
    return yaml.safe_dump(json_format.MessageToDict(response), sort_keys=True, width=100)


@pytest.mark.parametrize("row", ROWS)
def test_whole_response(client: FunctionClient, row: Row, request: pytest.FixtureRequest) -> None:
    """The server's whole answer to the row's request is the expected one, field for field."""
    (reason,) = reasons(request.node)
    got = as_yaml(client.run(row.request(client)).response)
    if UPDATE_GOLDEN:
        row.expected.parent.mkdir(parents=True, exist_ok=True)
        row.expected.write_text(got)
    assert row.expected.exists(), f"{reason}: no {row.expected}; run with UPDATE_GOLDEN=1"
    want = row.expected.read_text()
    diff = "".join(
        difflib.unified_diff(
            want.splitlines(keepends=True),
            got.splitlines(keepends=True),
            f"want {row.expected.relative_to(HERE.parent.parent)}",
            "got",
        )
    )
    assert got == want, f"{reason}: the response differs (-want +got; UPDATE_GOLDEN=1):\n{diff}"
