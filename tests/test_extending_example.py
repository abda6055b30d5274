"""docs/extending.md's worked example runs as written: a new capability, a cloud for an old one.

The ``python example`` blocks are concatenated and run in a fresh interpreter (their kinds and
registrations must not leak into this test session), with a tests-only composer that calls
them as a module would. What it composes is checked here: the bodies validate against the
provider CRDs, ``uses`` becomes a hold then a ClusterUsage, a spec error names the user's
field, and a cloud without the capability is refused on the composite's cloud field.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.schemas import Catalog

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_BLOCK = re.compile(r"^```python example\n(.*?)^```$", re.MULTILINE | re.DOTALL)

DRIVER = """
import json, sys
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
import fnplatform.clouds  # noqa: F401 - what the function loads at start
from fnplatform.errors import CompositionError
from fnplatform.api.step_input import Input
from fnplatform.engine.runner import Call, compose
from fnplatform.request.structs import struct_to_dict
from tests.support.harness import observed_ready, request, step_input

cloud, retention = sys.argv[1], int(sys.argv[2])


def module(comp):
    comp.place(cloud, cloud_field="spec.cloud", region="europe-west1", scope="acme-events")
    add_queue(comp, "jobs", QueueSpec(queue_name="jobs"))
    add_topic(comp, "events", TopicSpec(retention_days=retention),
              fields={"retention_days": "spec.events.retentionDays"})
    comp.set_status("eventsTopic", topic_address(comp, "events"))


composite = {"apiVersion": "test.acme.com/v1", "kind": "XEvents",
             "metadata": {"name": "demo"}, "spec": {"cloud": cloud}}
passes = []
observed = {}
for _ in range(3):
    req = request(composite, step_input("environment"), observed=observed)
    try:
        step = Input.model_validate(struct_to_dict(req.input))
        rsp = compose(Call.of(req, step, module)).response
    except CompositionError as err:  # what dispatch turns into a fatal result
        passes.append({"desired": {}, "fatal": [str(err)], "status": {}})
        break
    desired = {n: struct_to_dict(r.resource) for n, r in rsp.desired.resources.items()}
    passes.append({
        "desired": desired,
        "fatal": [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL],
        "status": struct_to_dict(rsp.desired.composite.resource).get("status", {}),
    })
    observed = {n: observed_ready(b) for n, b in desired.items()}
print(json.dumps(passes))
"""


def example_code() -> str:
    """The ``python example`` blocks of docs/extending.md, in order."""
    blocks = EXAMPLE_BLOCK.findall((ROOT / "docs" / "extending.md").read_text())
    assert len(blocks) == 2, "extending.md shows the capability and the cloud, two blocks"
    return "\n".join(blocks)


def run_example(cloud: str, retention: int = 3) -> list[dict[str, Any]]:
    """Each pass of the example composer (fed back as observed, Ready)."""
    done = subprocess.run(
        [sys.executable, "-c", example_code() + DRIVER, cloud, str(retention)],
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    passes: list[dict[str, Any]] = json.loads(done.stdout)
    return passes


@pytest.fixture(scope="module")
def gcp_passes() -> list[dict[str, Any]]:
    return run_example("gcp")


def test_the_new_capability_and_the_new_cloud_compose_valid_bodies(
    gcp_passes: list[dict[str, Any]], catalog: Catalog
) -> None:
    first, converged = gcp_passes[0], gcp_passes[-1]
    assert first["fatal"] == []
    # The subscription waits for its topic (uses), then both exist with a ClusterUsage.
    assert set(first["desired"]) == {"events", "jobs-topic"}
    assert {"events", "jobs-topic", "jobs"} <= set(converged["desired"])
    usage = converged["desired"]["usage-jobs-topic-by-jobs"]
    assert usage["kind"] == "ClusterUsage"
    for body in converged["desired"].values():
        assert catalog.validate(body) == []
    topic = converged["desired"]["events"]["spec"]["forProvider"]
    assert topic == {
        "project": "acme-events",
        "messageRetentionDuration": "259200s",
        # the shared concerns: platform tags in the kind's tag field
        "labels": {"crossplane-composite": "demo", "platform-module": "environment"},
    }
    subscription = converged["desired"]["jobs"]["spec"]["forProvider"]
    assert subscription["topicRef"] == {"name": "demo-jobs-topic"}
    assert subscription["ackDeadlineSeconds"] == 30
    assert converged["status"]["eventsTopic"] == "projects/acme-events/topics/demo-events"


def test_a_spec_error_names_the_users_field() -> None:
    assert run_example("gcp", retention=90)[0]["fatal"] == [
        "spec.events.retentionDays: must be 1 to 31 days (Pub/Sub's limit)"
    ]


def test_a_cloud_without_the_capability_is_refused_on_the_cloud_field() -> None:
    fatal = run_example("azure")[0]["fatal"]
    assert fatal == ["spec.cloud: azure cannot provide queue; supported clouds: aws, gcp"]
