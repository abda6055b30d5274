"""``kubernetes_status``: what provider-kubernetes reports of the object an ``Object`` manages.

A module reads the live object's status (a Deployment's replicas, a ScaledObject's
conditions) under ``status.atProvider.manifest.status``; these tables pin each reading, and
what it says while the Object or its status is not there yet.
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform.observation.kubernetes import (
    manifest_condition_message,
    manifest_condition_true,
    manifest_status,
    manifest_value,
)

from tests.support.table import case


def observed_object(status: Any) -> dict[str, Any]:
    """An observed ``Object`` whose managed object reports ``status``."""
    return {
        "apiVersion": "kubernetes.crossplane.io/v1alpha2",
        "kind": "Object",
        "status": {"atProvider": {"manifest": {"kind": "Deployment", "status": status}}},
    }


CONDITIONS = {
    "conditions": [
        {
            "type": "Available",
            "status": "True",
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability.",
        },
        {
            "type": "Progressing",
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": "timed out",
        },
    ]
}


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        case("not created yet: nothing to read", None, {}),
        case(
            "created, but the provider has not copied the live object in yet",
            {"status": {"atProvider": {}}},
            {},
        ),
        case("the live object has no status yet", observed_object(None), {}),
        case("a status that is not a map is never read as one", observed_object("Running"), {}),
        case(
            "the live status, as the provider reports it",
            observed_object({"readyReplicas": 2}),
            {"readyReplicas": 2},
        ),
    ],
    ids=["unobserved", "no-manifest", "no-status", "not-a-map", "reported"],
)
def test_manifest_status(observed: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    assert manifest_status(observed) == expected


@pytest.mark.parametrize(
    ("observed", "path", "default", "expected"),
    [
        case("a reported field", observed_object({"readyReplicas": 3}), "readyReplicas", None, 3),
        case(
            "a nested one, by field path",
            observed_object({"scale": {"replicas": 0}}),
            "scale.replicas",
            None,
            0,
        ),
        case("not reported yet: the caller's default", observed_object({}), "readyReplicas", 0, 0),
        case("no Object at all: the default too", None, "readyReplicas", None, None),
    ],
    ids=["field", "nested", "default", "unobserved"],
)
def test_manifest_value(
    observed: dict[str, Any] | None, path: str, default: Any, expected: Any
) -> None:
    assert manifest_value(observed, path, default) == expected


@pytest.mark.parametrize(
    ("observed", "type_", "expected"),
    [
        case("the condition is True", observed_object(CONDITIONS), "Available", True),
        case("the condition is False", observed_object(CONDITIONS), "Progressing", False),
        case("the condition is not reported", observed_object(CONDITIONS), "Ready", False),
        case("no Object yet", None, "Available", False),
    ],
    ids=["true", "false", "absent", "unobserved"],
)
def test_manifest_condition_true(
    observed: dict[str, Any] | None, type_: str, expected: bool
) -> None:
    assert manifest_condition_true(observed, type_) is expected


@pytest.mark.parametrize(
    ("observed", "type_", "expected"),
    [
        case('no Object yet: says so rather than "unknown"', None, "Available", "not created yet"),
        case(
            "the Object exists but its object reports no such condition yet",
            observed_object({}),
            "Available",
            "Available not reported yet",
        ),
        case(
            "a reported condition: the reason and message a user reads",
            observed_object(CONDITIONS),
            "Progressing",
            "ProgressDeadlineExceeded: timed out",
        ),
    ],
    ids=["unobserved", "unreported", "reported"],
)
def test_manifest_condition_message(
    observed: dict[str, Any] | None, type_: str, expected: str
) -> None:
    assert manifest_condition_message(observed, type_) == expected
