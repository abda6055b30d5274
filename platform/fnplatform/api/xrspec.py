"""The user's part of a composite's ``spec``, without the fields Crossplane itself manages.

A composer that validates ``spec`` strictly (unknown fields are errors, because flavor or
preset data is not pruned by the API server) first removes what Crossplane writes there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CROSSPLANE_SPEC_FIELDS = frozenset(
    {
        "claimRef",
        "compositionRef",
        "compositionRevisionRef",
        "compositionRevisionSelector",
        "compositionSelector",
        "compositionUpdatePolicy",
        "crossplane",
        "environmentConfigRefs",
        "publishConnectionDetailsTo",
        "resourceRef",
        "resourceRefs",
        "writeConnectionSecretToRef",
    }
)


def user_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` without the fields Crossplane manages on every composite."""
    return {key: value for key, value in spec.items() if key not in CROSSPLANE_SPEC_FIELDS}
