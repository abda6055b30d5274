"""Benchmark of the environment module: p50/p99 of its render cases over gRPC.

    .venv/bin/python bench/environment.py

Uses ``bench/run.py``'s harness: every ``tests/render-cases/environment.yaml`` case as the CLI
would send it, against the floor server (gRPC only, no composing), the function composing every
request (``--response-cache-mib 0``) and the function as shipped (cache on: the same request
repeated), measured in interleaved rounds so a burst of machine noise is shared. Prints the
markdown table quoted in docs/environment.md (Numbers).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

from bench import run as bench  # noqa: E402


def main() -> None:
    """Measure every environment render case and print the table."""
    loads = [w for w in bench.example_workloads() if w.name.startswith("environment/")]
    with contextlib.ExitStack() as stack:
        servers = {
            "floor": stack.enter_context(bench.serving(floor=True)),
            "cache off": stack.enter_context(bench.serving(*bench.NO_CACHE)),
            "cache on": stack.enter_context(bench.serving()),
        }
        header = bench.comparison_header(servers)
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        bench.comparison_rows(servers, loads)
    print(bench.machine())


if __name__ == "__main__":
    main()
