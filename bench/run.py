"""Benchmark function-platform over gRPC, as Crossplane calls it; results go to bench/results.md.

    python bench/run.py                      # latency, pools, floor, head-of-line, size, RSS
    python bench/run.py soak --requests 100000

Every figure is measured against a ``python -m function`` process (and the SDK's do-nothing
server for the floor) on a free local port, so it includes gRPC, protobuf and the executor.
The machine is shared, so figures are indicative: compare ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

import grpc  # noqa: E402
import yaml  # noqa: E402
from crossplane.function.proto.v1 import run_function_pb2 as fnv1  # noqa: E402

from function.dispatch import run as compose_in_process  # noqa: E402
from tests.support.cases import (  # noqa: E402
    cluster_case,
    cluster_composite,
    converge,
    module_cases,
)
from tests.support.harness import Rendered, free_port, request  # noqa: E402

METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}"}
POOL_COUNTS = (1, 10, 50, 200)
MIB = 1024 * 1024


# -- servers ----------------------------------------------------------------------------------


@dataclass
class Served:
    """A server process and a raw (bytes in, bytes out) RunFunction call to it."""

    process: subprocess.Popen[bytes]
    address: str
    channel: grpc.Channel = field(init=False)

    def __post_init__(self) -> None:
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        self.channel = grpc.insecure_channel(self.address, options=options)
        grpc.channel_ready_future(self.channel).result(timeout=60)
        self.call = self.channel.unary_unary(METHOD, request_serializer=None,
                                             response_deserializer=None)

    def rss(self) -> dict[str, int]:
        """Current and peak resident memory in KiB, of the server and its worker processes."""
        return _memory(self.process.pid)


def _memory(pid: int) -> dict[str, int]:
    found = {"rss": 0, "peak": 0}
    for candidate in [pid, *_children(pid)]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    found["rss"] += int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    found["peak"] += int(line.split()[1])
    return found


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            found += [int(child) for child in text]
    return found


@contextlib.contextmanager
def serving(*args: str, floor: bool = False) -> Iterator[Served]:
    """``python -m function`` (or the floor server) on a free port."""
    address = f"127.0.0.1:{free_port()}"
    if floor:
        command = [sys.executable, str(ROOT / "bench" / "floor.py"), address]
    else:
        command = [sys.executable, "-m", "function", "--insecure", "--address", address,
                   "--max-send-message-size", "64", "--max-recv-message-size", "64", *args]
    process = subprocess.Popen(command, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        yield Served(process, address)
    finally:
        process.terminate()
        process.wait(timeout=30)


# -- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A named serialized request and what composing it produces."""

    name: str
    payload: bytes
    resources: int
    response_bytes: int


def _runner(req: fnv1.RunFunctionRequest) -> Rendered:
    return Rendered(compose_in_process(req))


def _workload(name: str, req: fnv1.RunFunctionRequest) -> Workload:
    rendered = _runner(req)
    return Workload(name, req.SerializeToString(), len(rendered.resources),
                    rendered.response.ByteSize())


def example_workloads() -> list[Workload]:
    """Every ``tests/render-cases/*.yaml`` case, its requirements fetched as crank would."""
    spec = importlib.util.spec_from_file_location("render_examples",
                                                  ROOT / "tools" / "render_examples.py")
    if spec is None or spec.loader is None or not list(ROOT.glob("tests/render-cases/*.yaml")):
        return [_workload(case.id, case.request()) for case in module_cases()]
    tool = importlib.util.module_from_spec(spec)
    sys.modules["render_examples"] = tool  # dataclasses look their module up while defining
    spec.loader.exec_module(tool)
    return [_workload(case.id, _example_request(case)) for case in tool.load_cases()]


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _example_request(case: Any) -> fnv1.RunFunctionRequest:
    composition = _documents(case.composition)[0]
    step = composition["spec"]["pipeline"][0]["input"]
    xr = _documents(case.xr)[0]
    available = [d for p in (*case.environment, *case.required) for d in _documents(p)]
    observed = {}
    if case.observed:
        for doc in _documents(case.observed):
            annotations = doc.get("metadata", {}).get("annotations", {})
            observed[annotations["crossplane.io/composition-resource-name"]] = doc
    fetched: dict[str, list[dict[str, Any]]] = {}
    for _ in range(5):  # crank calls again until the requirements stop changing
        req = request(xr, step, observed=observed, required=fetched)
        wanted = _runner(req).requirements
        if set(wanted) <= set(fetched):
            return req
        fetched = {key: [d for d in available if _matches(d, sel)] for key, sel in wanted.items()}
    return request(xr, step, observed=observed, required=fetched)


def _matches(doc: dict[str, Any], selector: dict[str, Any]) -> bool:
    if doc.get("apiVersion") != selector.get("apiVersion") or doc.get("kind") != selector.get(
            "kind"):
        return False
    metadata = doc.get("metadata") or {}
    if "matchName" in selector:
        return metadata.get("name") == selector["matchName"]
    labels = (selector.get("matchLabels") or {}).get("labels") or {}
    return all((metadata.get("labels") or {}).get(k) == v for k, v in labels.items())


def pool_workload(pools: int, cloud: str = "aws") -> Workload:
    """A cluster with ``pools`` node pools, every resource observed Ready (steady state)."""
    case = cluster_case(cloud).with_composite(cluster_composite(cloud, f"bench-{pools}", pools))
    _, observed = converge(_runner, case)
    return _workload(f"{cloud} cluster, {pools} pools", case.request(observed=observed))


# -- measuring --------------------------------------------------------------------------------


def timings(call: Callable[[bytes], bytes], payload: bytes, count: int, warmup: int = 3
            ) -> list[float]:
    """Latencies in ms of ``count`` sequential calls, after ``warmup`` unmeasured ones."""
    for _ in range(warmup):
        call(payload)
    found = []
    for _ in range(count):
        start = time.perf_counter()
        call(payload)
        found.append((time.perf_counter() - start) * 1000)
    return found


def p(values: list[float], quantile: float) -> float:
    """The ``quantile`` (0..1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]


def iterations(resources: int) -> int:
    """Enough samples for a p99 without spending minutes on the big ones."""
    return 300 if resources < 100 else 100 if resources < 400 else 30


@dataclass
class Report:
    """Markdown sections, in order."""

    lines: list[str] = field(default_factory=list)

    def section(self, title: str, header: list[str], rows: list[list[Any]], note: str = ""
                ) -> None:
        """A table, printed as it is produced so a long run shows progress."""
        block = [f"## {title}", ""]
        if note:
            block += [note, ""]
        block += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        block += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        self.lines += [*block, ""]
        print("\n".join(block), flush=True)


def latency_rows(served: Served, workloads: list[Workload]) -> list[list[Any]]:
    """p50/p99 and sizes per workload."""
    rows = []
    for load in workloads:
        found = timings(lambda b: served.call(b, timeout=120), load.payload,
                        iterations(load.resources))
        rows.append([load.name, load.resources, f"{load.response_bytes / 1024:.1f}",
                     f"{p(found, 0.5):.2f}", f"{p(found, 0.99):.2f}"])
    return rows


def marginal_cost(rows: list[list[Any]]) -> float:
    """Least-squares slope of p50 latency (ms) over composed resources."""
    xs = [float(r[1]) for r in rows]
    ys = [float(r[3]) for r in rows]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def head_of_line(args: tuple[str, ...], small: Workload, big: Workload) -> list[Any]:
    """Small-request latency alone, then while 1000-pool requests run back to back."""
    with serving(*args) as served:
        def call(b: bytes) -> bytes:
            return served.call(b, timeout=300)
        alone = timings(call, small.payload, 300)
        stop = threading.Event()
        big_latencies: list[float] = []

        def hammer() -> None:
            while not stop.is_set():
                start = time.perf_counter()
                call(big.payload)
                big_latencies.append((time.perf_counter() - start) * 1000)

        background = threading.Thread(target=hammer, daemon=True)
        background.start()
        time.sleep(0.3)
        loaded = timings(call, small.payload, 300, warmup=0)
        stop.set()
        background.join()
    mode = "threads (default)" if not args else " ".join(args)
    return [mode, f"{p(alone, 0.5):.2f}", f"{p(alone, 0.99):.2f}", f"{p(loaded, 0.5):.2f}",
            f"{p(loaded, 0.99):.2f}", f"{max(loaded):.0f}", len(big_latencies),
            f"{statistics.median(big_latencies):.0f}" if big_latencies else "-"]


# -- modes ------------------------------------------------------------------------------------


def benchmark(out: Path) -> None:
    """Every figure except the soak."""
    report = Report([f"# Benchmark results ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
                     "", "Indicative: a shared 2-core machine; `python bench/run.py`. "
                     "Latency is per RunFunction over gRPC, sequential calls from one client.",
                     ""])
    header = ["request", "composed resources", "response KiB", "p50 ms", "p99 ms"]
    examples = example_workloads()
    pools = [pool_workload(n) for n in POOL_COUNTS]
    with serving() as served:
        example_rows = latency_rows(served, examples)
        report.section("Example cases", header, example_rows)
        pool_rows = latency_rows(served, pools)
        report.section("One cluster (AWS, all resources observed) by pool count", header,
                       pool_rows)
        cost = marginal_cost(pool_rows)
        peak = served.rss()
    with serving(floor=True) as floor:
        floor_rows = latency_rows(floor, [examples[0], pools[-1]])
    ratio_rows = [[ours[0], ours[3], base[3], f"{float(ours[3]) / float(base[3]):.1f}x"]
                  for ours, base in zip([example_rows[0], pool_rows[-1]], floor_rows, strict=True)]
    report.section("Floor: the same request to a do-nothing SDK function", [
        "request", "function-platform p50 ms", "do-nothing p50 ms", "ratio"], ratio_rows)
    report.section("Cost and memory", ["figure", "value"], [
        ["marginal cost per composed resource (slope of p50 over pool rows)",
         f"{cost * 1000:.0f} µs"],
        ["server RSS after the runs above", f"{peak['rss'] / 1024:.0f} MiB"],
        ["server peak RSS (VmHWM)", f"{peak['peak'] / 1024:.0f} MiB"],
    ])
    big = pool_workload(1000)
    report.section("1000 node pools vs the 4 MiB default limit", ["figure", "value"], [
        ["composed resources", big.resources],
        ["response size", f"{big.response_bytes / MIB:.2f} MiB "
                          f"({100 * big.response_bytes / (4 * MIB):.0f}% of 4 MiB)"],
        ["request size", f"{len(big.payload) / MIB:.2f} MiB"],
        ["fits", "yes" if big.response_bytes <= 4 * MIB else "no: fatal result names the limit"],
    ])
    head_of_line_section(report, examples[0], big)
    out.write_text("\n".join(report.lines))
    print(f"wrote {out}")


HOL_MODES: tuple[tuple[str, ...], ...] = (
    (), ("--switch-interval-ms", "5"), ("--processes", "2"),
)


def head_of_line_section(report: Report, small: Workload, big: Workload) -> None:
    """Head-of-line blocking for each serving mode."""
    report.section(
        "Head-of-line blocking: small request while 1000-pool requests run back to back",
        ["serving", "alone p50", "alone p99", "loaded p50", "loaded p99", "loaded max",
         "big done", "big p50 ms"], [head_of_line(mode, small, big) for mode in HOL_MODES],
        note=f"small = `{small.name}`; big = 1000 pools ({big.resources} resources); "
        "latencies in ms.")


def head_of_line_only(out: Path) -> None:
    """Just the head-of-line figures (they decide the serving default)."""
    report = Report()
    head_of_line_section(report, example_workloads()[0], pool_workload(1000))
    with out.open("a") as handle:
        handle.write("\n".join(["", *report.lines]))


def soak(requests_total: int, out: Path, clients: int = 4) -> None:
    """``requests_total`` requests over every workload; RSS after warm-up and at the end."""
    loads = [*example_workloads(), pool_workload(10)]
    payloads = [w.payload for w in loads]
    warmup = max(1000, requests_total // 20)
    samples: list[tuple[int, int]] = []
    started = time.perf_counter()
    with serving() as served:
        def send(index: int) -> None:
            served.call(payloads[index % len(payloads)], timeout=120)
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(send, range(warmup)))
            after_warmup = served.rss()["rss"]
            step = max(1, (requests_total - warmup) // 10)
            done = warmup
            while done < requests_total:
                batch = min(step, requests_total - done)
                list(pool.map(send, range(done, done + batch)))
                done += batch
                samples.append((done, served.rss()["rss"]))
                print(f"{done} requests, RSS {samples[-1][1] / 1024:.1f} MiB", flush=True)
        end = served.rss()
    elapsed = time.perf_counter() - started
    growth = 100 * (end["rss"] - after_warmup) / after_warmup
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "", f"## Soak: {requests_total} requests ({stamp})",
        "", f"{clients} concurrent clients cycling over {len(loads)} requests "
        f"(every example case and a 10-pool cluster); {elapsed:.0f} s, "
        f"{requests_total / elapsed:.0f} req/s.", "",
        "| figure | value |", "|---|---|",
        f"| RSS after warm-up ({warmup} requests) | {after_warmup / 1024:.1f} MiB |",
        f"| RSS at the end | {end['rss'] / 1024:.1f} MiB |",
        f"| peak RSS (VmHWM) | {end['peak'] / 1024:.1f} MiB |",
        f"| growth after warm-up | {growth:+.1f}% ({'ok' if growth < 10 else 'FAIL'}: < 10%) |",
        "", "RSS samples: " + ", ".join(f"{n}: {kib / 1024:.1f} MiB" for n, kib in samples), "",
    ]
    with out.open("a") as handle:
        handle.write("\n".join(lines))
    print("\n".join(lines))
    if growth >= 10:
        sys.exit(1)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", choices=["run", "soak", "hol"], default="run")
    parser.add_argument("--requests", type=int, default=100_000, help="soak: how many requests")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.md")
    args = parser.parse_args()
    if args.mode == "soak":
        soak(args.requests, args.out)
    elif args.mode == "hol":
        head_of_line_only(args.out)
    else:
        benchmark(args.out)


if __name__ == "__main__":
    main()
