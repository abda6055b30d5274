"""The environment API: claim ``platform.acme.com/v1alpha1 EnvironmentClaim``, XR
``UnifiedEnvironment`` (XRD ``unifiedenvironments.platform.acme.com``, the original design's names).

``tools/generate_apis.py`` writes ``apis/environment/definition.yaml`` from :data:`API`.
"""

from __future__ import annotations

from fnplatform.api.xrd import (
    AGE_COLUMN,
    READY_COLUMN,
    ApiDefinition,
    CompositionAlias,
    PrinterColumn,
)
from fnplatform.composers.environment.model import EnvironmentSpec, EnvironmentStatus

API = ApiDefinition(
    group="platform.acme.com",
    kind="UnifiedEnvironment",
    claim_kind="EnvironmentClaim",
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
        PrinterColumn("Cloud", ".spec.cloud"),
        READY_COLUMN,
        PrinterColumn("Namespace", ".status.namespace"),
        PrinterColumn("Bucket", ".status.frontendBucketName"),
        PrinterColumn("CDN", ".status.cdnDomainName", priority=1),
        PrinterColumn("Database", ".status.databaseHost", priority=1),
        AGE_COLUMN,
    ),
)
