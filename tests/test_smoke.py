"""The server answers both protocol versions and reports bad step input as a fatal result."""

from __future__ import annotations

import pytest

from tests.support.harness import request, step_input


@pytest.mark.parametrize("protocol", ["v1", "v1beta1"])
def test_unknown_module_is_a_fatal_result_naming_the_field(client, protocol):
    rsp = client.run(
        request({"apiVersion": "x/v1", "kind": "X"}, step_input("nope")), protocol=protocol
    )
    assert len(rsp.fatal) == 1
    assert "input.module" in rsp.fatal[0]
    assert "cluster" in rsp.fatal[0]
    assert "Traceback" not in rsp.fatal[0]


def test_earlier_steps_desired_state_is_kept(client):
    earlier = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-earlier-step"}}
    rsp = client.run(
        request(
            {"apiVersion": "x/v1", "kind": "X"}, step_input("nope"), desired={"earlier": earlier}
        )
    )
    assert rsp.resource("earlier")["metadata"]["name"] == "from-earlier-step"
