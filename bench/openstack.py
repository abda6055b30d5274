"""Benchmark the openstack module over gRPC: pools and tenants at steady state.

    python bench/openstack.py            # prints a Markdown table

Each workload is the request Crossplane sends once everything exists (composed until the
desired set is stable, every resource observed Ready), serialized once and sent to a
``python -m function`` process on a free local port with the same raw gRPC call
``bench/run.py`` uses, so figures include gRPC, protobuf and the executor: once with the
response cache off (``--response-cache-mib 0``: the cost of composing) and once with the default
cache (the same request again). p50/p99 are nearest rank over sequential calls after 3
unmeasured warm-ups. The machine is shared: indicative.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

from tests.support import openstack as o  # noqa: E402
from tests.support.harness import observed_ready  # noqa: E402


def _bench_run() -> Any:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module
    spec.loader.exec_module(module)
    return module


def steady(run: Any, make: Any) -> Any:
    """The steady-state request of ``make(observed)``."""
    observed: dict[str, Any] = {}
    for _ in range(5):
        rendered = run._runner(make(observed))
        now = {n: observed_ready(b) for n, b in rendered.resources.items()}
        if set(now) == set(observed):
            break
        observed = now
    return make(observed)


def tenant_on(pools: int) -> Any:
    names = [f"hv-{i:03d}" for i in range(pools)]
    fetched = [o.ready(o.control_plane_cluster()), o.ready(o.storage())]
    fetched += [o.ready(o.hypervisor(n)) for n in names]
    composite = o.openstack(hypervisors=names, size="xlarge")
    return lambda observed: o.openstack_request(composite, fetched, observed=observed)


def main() -> None:
    run = _bench_run()
    workloads = [
        run._workload(
            "hypervisor pool (Shoot + access)",
            steady(run, lambda obs: o.pool_request(o.hypervisor(), observed=obs)),
        ),
        run._workload(
            "tenant on 3 pools",
            steady(
                run, lambda obs: o.openstack_request(o.openstack(), o.region_pools(), observed=obs)
            ),
        ),
    ]
    workloads += [
        run._workload(f"tenant on {n} hypervisor pools", steady(run, tenant_on(n)))
        for n in (10, 100, 200)
    ]
    rows = {
        load.name: [load.name, load.resources, f"{load.response_bytes / 1024:.1f}"]
        for load in workloads
    }
    # Cache off: what composing costs. Cache on (the default): a repeated request.
    for args in (("--response-cache-mib", "0"), ()):
        with run.serving(*args) as served:
            for load in workloads:
                found = run.timings(
                    run._caller(served), load.payload, run.iterations(load.resources)
                )
                rows[load.name] += [f"{run.p(found, 0.5):.2f}", f"{run.p(found, 0.99):.2f}"]
    print(
        "| workload | resources | response KiB | p50 ms (no cache) | p99 ms (no cache) "
        "| p50 ms (cache) | p99 ms (cache) |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows.values():
        print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main()
