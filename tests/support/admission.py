"""Bad claims the API server refuses by the XRDs' CEL rules (issue 32 item 4), each with the
field and the words of its message: one table for the unit test (celpy and the function's
own check), ``crossplane resource validate`` (tests/test_e2e_admission.py) and the live API
server's dry-run (tests/live/test_live_admission.py).

Each is a shipped example claim (``examples/``) with one change; the contact-center
document's claim is the design document's own (``tests/fixtures/design-documents/``), with
the version its ``apiVersion`` lacks added (the document writes ``contact-center.infra``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT_CLAIM = (
    ROOT
    / "tests"
    / "fixtures"
    / "design-documents"
    / "contact-center"
    / "claim-us-east-agent-cluster.yaml"
)


@dataclass(frozen=True)
class BadClaim:
    """A claim one rule refuses: where it comes from, what changes, what the server says."""

    id: str
    module: str  # the API id: apis/<module>/definition.yaml
    source: Path
    change: Callable[[dict[str, Any]], None]
    field: str  # the field the message names (the rule's fieldPath, under spec)
    words: str  # part of the rule's message

    def claim(self) -> dict[str, Any]:
        """The bad claim (a v1 claim, namespaced)."""
        claim = copy.deepcopy(yaml.safe_load(self.source.read_text()))
        self.change(claim)
        return claim


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(claim: dict[str, Any]) -> None:
        node = claim
        *parents, last = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value

    return change


def _document(claim: dict[str, Any]) -> None:
    claim["apiVersion"] = "contact-center.infra/v1alpha1"
    claim["metadata"]["namespace"] = "contact-center"


CC = ROOT / "examples" / "contact-center"
BAD_CLAIMS = (
    BadClaim(
        "contact-center-document",
        "contact-center",
        DOCUMENT_CLAIM,
        _document,
        "spec.parameters",
        "move cloud, region, platform",
    ),
    BadClaim(
        "contact-center-failover-region",
        "contact-center",
        CC / "claim-aws-failover.yaml",
        _set("spec.failoverPolicy.secondaryRegion", "us-east-1"),
        "spec.failoverPolicy.secondaryRegion",
        "must differ from region",
    ),
    BadClaim(
        "contact-center-replication-region",
        "contact-center",
        CC / "claim-gcp.yaml",
        _set("spec.recording.replicationRegion", "us-east1"),
        "spec.recording.replicationRegion",
        "must differ from region",
    ),
    BadClaim(
        "contact-center-pci-lock",
        "contact-center",
        CC / "claim-us-east-agent-cluster.yaml",
        _set("spec.recording.objectLock", False),
        "spec.recording.objectLock",
        "must not be false for PCI-DSS and HIPAA",
    ),
    BadClaim(
        "contact-center-hipaa-retention",
        "contact-center",
        CC / "claim-azure.yaml",
        _set("spec.taggingPolicy.complianceLevel", "HIPAA"),
        "spec.recording.retentionDays",
        "HIPAA keeps records at least six years",
    ),
    BadClaim(
        "cluster-node-counts",
        "cluster",
        ROOT / "examples" / "cluster" / "claim-gcp.yaml",
        _set("spec.pools.default", {"autoscaling": {"minNodeCount": 5, "maxNodeCount": 2}}),
        "spec.pools.default.autoscaling.minNodeCount",
        "must not exceed maxNodeCount",
    ),
    BadClaim(
        "cluster-addon-pool",
        "cluster",
        ROOT / "examples" / "cluster" / "claim-gcp.yaml",
        _set("spec.parameters.addonPool", "accel"),
        "spec.parameters.addonPool",
        "must name one of spec.pools",
    ),
    BadClaim(
        "async-actor-replicas",
        "async-actor",
        ROOT / "examples" / "async-actor" / "claim.yaml",
        _set("spec.scaling.minReplicaCount", 20),
        "spec.scaling.minReplicaCount",
        "must not exceed maxReplicaCount",
    ),
)
