"""The clouds this function composes for: one type, one order, used by every module's API.

``Cloud`` is the type of every ``cloud`` field (the XRDs' enums are generated from it, so
they list the clouds in one order) and of every registration on a capability
(:mod:`fnplatform.library.capability`).
"""

from __future__ import annotations

from typing import Literal, get_args

Cloud = Literal["aws", "azure", "gcp"]

#: Every cloud, in the one order the APIs list them.
CLOUDS: tuple[Cloud, ...] = get_args(Cloud)
