"""Many composites at once on the live control plane (issue 34 item 1): N composites of the
mixed load (tests/live/load.py, MIX) applied together with the function at 2 replicas, and the
same load through the do-nothing floor (bench/floor_live.py: one Object per composite), side by
side: time until all are Ready, RunFunction calls, per-call latency p50/p99 from the function's
own histogram and from Crossplane's `function_run_function_seconds`, CPU seconds and peak RSS
per replica (bench/results.md, "Scale").

Runs tests/live/test_live_scale.py once (`make bench-scale`): the function's load, then the
floor's (the replicas restarted as the floor), on the same control plane, and prints a
markdown table from its scale-<variant>-<N>.json. Needs what `make test-live` needs.

    python bench/scale.py [--n 200] [--replicas 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VARIANTS = ("function-platform", "floor")
#: How many of a module's composites a bench load has at most (tests/live/load.py mix): 4
#: clusters (about 110 resources each), every other module as load.MIX weighs it
DEFAULT_MAX = "cluster=4"


def run(out: Path, variants: list[str], n: int, replicas: int) -> dict[str, dict[str, Any]]:
    """One live run of the scale test, one load per variant after the other on the same
    control plane; each variant's measurements ({} when it failed before measuring)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "LIVE_DIR": str(out),
        "LIVE_SCALE_VARIANTS": ",".join(variants),
        "LIVE_SCALE_N": str(n),
        "LIVE_SCALE_REPLICAS": str(replicas),
        # how long a load may take to settle before it is measured as it is
        "LIVE_SCALE_READY_WITHIN_S": os.environ.get(
            "LIVE_SCALE_READY_WITHIN_S", str(max(900, 12 * n))
        ),
        # at most so many of a module's composites (load.mix), past it async actors:
        # e.g. LIVE_SCALE_MAX=cluster=4,contact-center=10,environment=10 for a lighter load
        "LIVE_SCALE_MAX": os.environ.get("LIVE_SCALE_MAX", DEFAULT_MAX),
        # the function as shipped: tests compose every reused pass again to compare
        # (tests/conftest.py), which a measurement must not pay for
        "FNPLATFORM_VERIFY_REUSE": "0",
    }
    cmd = [
        "tools/live/netns.sh",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-m",
        "live",
        "tests/live/test_live_scale.py",
        "-p",
        "no:cacheprovider",
    ]
    subprocess.run(cmd, cwd=REPO, env=env, check=False)
    results = {}
    for variant in variants:
        found = out / f"scale-{variant}-{n}.json"
        results[variant] = json.loads(found.read_text()) if found.exists() else {}
    return results


def table(results: dict[str, dict[str, Any]]) -> str:
    """Markdown: one column per variant."""
    rows = [
        ("composites", lambda m: f"{m['composites']}"),
        ("of which", lambda m: ", ".join(f"{v} {k}" for k, v in m.get("mix", {}).items())),
        ("replicas", lambda m: f"{m['replicas']}"),
        (
            "Ready / openstack tenants Pending on their pools",
            lambda m: f"{m.get('ready', '?')} / {m.get('pending_on_pools', '?')}",
        ),
        (
            "until all settled (Ready, or Pending on pools), s",
            lambda m: (
                f"{m['ready_s']:.0f}"
                if m.get("converged", True)
                else f"not within {m['ready_s']:.0f} ({m.get('ready', '?')} Ready)"
            ),
        ),
        ("RunFunction calls (Crossplane)", lambda m: f"{m['calls']:.0f}"),
        (
            "function's own histogram p50 / p99, ms",
            lambda m: f"{m['fn_p50_ms']:.2f} / {m['fn_p99_ms']:.2f}",
        ),
        (
            "Crossplane `function_run_function_seconds` p50 / p99, ms",
            lambda m: f"{m['xp_p50_ms']:.1f} / {m['xp_p99_ms']:.1f}",
        ),
        (
            "CPU s per replica",
            lambda m: " / ".join(f"{r['cpu_s']:.0f}" for r in m["per_replica"].values()),
        ),
        (
            "peak RSS MiB per replica",
            lambda m: " / ".join(f"{r['peak_rss_mib']:.0f}" for r in m["per_replica"].values()),
        ),
        (
            "calls per replica",
            lambda m: " / ".join(f"{r['calls']:.0f}" for r in m["per_replica"].values()),
        ),
    ]
    head = "| | " + " | ".join(results) + " |"
    rule = "|---" * (1 + len(results)) + "|"
    lines = [head, rule]
    for label, cell in rows:
        lines.append(
            f"| {label} | "
            + " | ".join(cell(m) if m else "failed" for m in results.values())
            + " |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-scale"))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    results = run(args.out, args.variants.split(","), args.n, args.replicas)
    (args.out / "scale.json").write_text(json.dumps(results, indent=2))
    print(table(results))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
