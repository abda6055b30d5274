"""``python -m fnplatform.upgrade preview ...``: the upgrade preview (:mod:`.preview`)."""

from __future__ import annotations

import sys

from fnplatform.upgrade.preview import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
