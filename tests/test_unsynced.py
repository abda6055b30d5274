"""A composed resource the cloud refuses (its provider reports ``Synced=False`` with the
cloud's error) is reported on the composite and its claim as a warning naming the resource and
quoting the error (issue 34 item 3: Crossplane v2.4 itself never shows a composed resource's
own ``Synced`` on the composite); the warning stops once the resource syncs again."""

from __future__ import annotations

import copy

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.dispatch import run
from tests.support.cases import converge, module_cases
from tests.support.harness import Rendered

ERROR = (
    "AccessDenied: User arn:aws:iam::123456789012:user/provider is not authorized to "
    "perform: sqs:SetQueueAttributes"
)


def _unsynced(body: dict, message: str) -> dict:
    failing = copy.deepcopy(body)
    conditions = [
        c
        for c in (failing.setdefault("status", {}).get("conditions") or [])
        if c.get("type") != "Synced"
    ]
    failing["status"]["conditions"] = [
        *conditions,
        {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": message},
    ]
    return failing


def test_a_refused_resource_is_a_warning_naming_it_with_the_clouds_error_until_it_syncs():
    case = module_cases()[0]
    rendered, observed = converge(lambda req: Rendered(run(req)), case)
    name = sorted(observed)[0]
    failing = {**observed, name: _unsynced(observed[name], ERROR)}
    answer = Rendered(run(case.request(observed=failing, required=case.fetched())))
    warnings = [r for r in answer.results if r.reason == "ComposedResourceUnsynced"]
    assert len(warnings) == 1
    (warning,) = warnings
    assert warning.severity == fnv1.SEVERITY_WARNING
    assert warning.target == fnv1.TARGET_COMPOSITE_AND_CLAIM
    assert warning.message.startswith(f"{name} ({observed[name]['kind']} ")
    assert warning.message.endswith(f"ReconcileError: {ERROR}")
    # nothing else changes: the same resources are desired
    assert sorted(answer.resources) == sorted(rendered.resources)
    healthy = Rendered(run(case.request(observed=observed, required=case.fetched())))
    assert not [r for r in healthy.results if r.reason == "ComposedResourceUnsynced"]
