"""The environment API: claim ``platform.acme.com/v1alpha1 EnvironmentClaim``, XR
``UnifiedEnvironment`` (XRD ``unifiedenvironments.platform.acme.com``, the original design's names).

``tools/generate_apis.py`` writes ``apis/environment/definition.yaml`` from :data:`API`.
"""

from __future__ import annotations

from fnplatform.api.xrd import ApiDefinition, CompositionAlias
from fnplatform.composers.environment.model import EnvironmentSpec, EnvironmentStatus

READY_CONDITION = ".status.conditions[?(@.type=='Ready')].status"

API = ApiDefinition(
    group="platform.acme.com",
    version="v1alpha1",
    kind="UnifiedEnvironment",
    plural="unifiedenvironments",
    claim_kind="EnvironmentClaim",
    claim_plural="environmentclaims",
    spec_model=EnvironmentSpec,
    status_model=EnvironmentStatus,
    # The document's Composition: claims select it by name or by its label provider: aws. The
    # label does not pin the cloud: spec.cloud does (default aws).
    aliases=(
        CompositionAlias(
            "unifiedenvironment.aws.platform.acme.com",
            "Building a Unified Application Environment for Python Services and Micro-frontends "
            "with Crossplane Compositions, Phase 2",
            labels={"provider": "aws"},
        ),
    ),
    printer_columns=(
        {"name": "Cloud", "type": "string", "jsonPath": ".spec.cloud"},
        {"name": "Ready", "type": "string", "jsonPath": READY_CONDITION},
        {"name": "Namespace", "type": "string", "jsonPath": ".status.namespace"},
        {"name": "Bucket", "type": "string", "jsonPath": ".status.frontendBucketName"},
        {"name": "CDN", "type": "string", "jsonPath": ".status.cdnDomainName", "priority": 1},
        {"name": "Database", "type": "string", "jsonPath": ".status.databaseHost", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ),
)
