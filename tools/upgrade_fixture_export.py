"""Write an upgrade fixture as the export of a cluster running its release, to preview offline.

    python tools/upgrade_fixture_export.py tests/upgrade/0.1.0/environment/aws.yaml export.yaml
    make upgrade-preview RUNNING=de7f94b FROM=export.yaml

A fixture (``tests/upgrade/<version>/``, docs/upgrading.md) holds what a cluster running the
release holds once a composite converged. The export is those objects as
``python -m fnplatform.upgrade preview --save-export`` writes a live cluster: the Composition
(one step running function-platform with the fixture's input), the composite, its composed
resources (controlled by it), the resources it requires and the connection Secrets
(tests/support/upgrade_export.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [p for p in (str(ROOT / "platform"), str(ROOT)) if p not in sys.path]

from fnplatform.upgrade.inputs import write_export  # noqa: E402

from tests.support.upgrade_export import export_of  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Then: make upgrade-preview RUNNING=<release commit> FROM=<export>",
    )
    parser.add_argument("fixture", type=Path, help="tests/upgrade/<version>/<module>/<case>.yaml")
    parser.add_argument("export", type=Path, help="the export to write (a v1 List)")
    args = parser.parse_args(argv)
    if not args.fixture.is_file():
        print(f"upgrade_fixture_export: {args.fixture}: no such file", file=sys.stderr)
        return 2
    fixture = yaml.safe_load(args.fixture.read_text())
    if not isinstance(fixture, dict) or "composite" not in fixture:
        print(f"upgrade_fixture_export: {args.fixture}: not an upgrade fixture", file=sys.stderr)
        return 2
    write_export(export_of(fixture), args.export)
    print(f"upgrade_fixture_export: wrote {args.export}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
