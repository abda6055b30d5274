"""The pieces of the live load (tests/live/load.py) and the kubelet stand-in's Service DNS that
run without a control plane: the mix, the histogram quantile, the /etc/hosts lines per replica."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.live import load
from tests.live.controlplane import REPO as ROOT
from tests.live.controlplane import add_hosts, remove_hosts
from tests.live.kube import docs_of


def test_the_mix_is_interleaved_named_apart_and_caps_modules():
    docs = load.mix(25, caps={})
    assert len({load.key(d) for d in docs}) == 25
    assert [d["kind"] for d in docs[:5]] == [
        "XAsyncActor",
        "UnifiedEnvironment",
        "ContactCenterEndpoint",
        "XCluster",
        "XOpenStackCluster",
    ]
    assert Counter(d["kind"] for d in docs)["XCluster"] == 2
    capped = load.mix(200, caps={"cluster": 4})
    assert Counter(d["kind"] for d in capped)["XCluster"] == 4
    # past a module's cap, an async actor takes the slot
    bench = Counter(
        d["kind"]
        for d in load.mix(200, caps=load.caps_from("cluster=4,contact-center=10,environment=10"))
    )
    assert (bench["XCluster"], bench["ContactCenterEndpoint"], bench["UnifiedEnvironment"]) == (
        4,
        10,
        10,
    )
    assert sum(bench.values()) == 200
    assert bench["XAsyncActor"] == 200 - 4 - 10 - 10 - bench["XOpenStackCluster"]
    apps = [d["spec"]["frontend"]["appName"] for d in capped if d["kind"] == "UnifiedEnvironment"]
    assert len(set(apps)) == len(apps)


def test_openstack_tenants_are_namespaced_composites_each_in_its_own_namespace():
    tenants = [d for d in load.mix(200, caps={"cluster": 4}) if d["kind"] == "XOpenStackCluster"]
    assert len(tenants) >= 30
    assert {d["apiVersion"] for d in tenants} == {"c5c3.io/v1alpha1"}
    namespaces = [d["metadata"]["namespace"] for d in tenants]
    assert len(set(namespaces)) == len(tenants)
    assert all(n.startswith("tenant-") for n in namespaces)
    # on the shared pools prepare() applies, as namespaced composites in poolNamespace
    pools = [load.namespaced(d) for d in docs_of(*(ROOT / p for p in load.OPENSTACK_POOLS))]
    assert {d["kind"] for d in pools} == {
        "XControlPlaneCluster",
        "XHypervisorCluster",
        "XStorageCluster",
    }
    assert {d["metadata"]["namespace"] for d in pools} == {"infrastructure"}
    names = {d["spec"].get("name") for d in pools}
    for tenant in tenants:
        spec = tenant["spec"]
        assert set(spec["hypervisorClusters"] + spec["storageClusters"]) <= names


def test_the_quantile_interpolates_within_the_bucket_as_prometheus_does():
    buckets = [(0.1, 50.0), (0.5, 90.0), (1.0, 100.0), (float("inf"), 100.0)]
    assert load.quantile(buckets, 0.5) == pytest.approx(0.1)
    assert load.quantile(buckets, 0.7) == pytest.approx(0.3)
    assert load.quantile(buckets, 0.99) == pytest.approx(0.95)
    assert load.quantile([(float("inf"), 3.0), (1.0, 1.0)], 0.9) == 1.0


def test_every_replica_gets_a_hosts_line_and_loses_it_when_removed(tmp_path: Path, monkeypatch):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    monkeypatch.setenv("FNPLATFORM_LIVE_HOSTS", str(hosts))
    names = ["function-platform.crossplane-system"]
    for address in ("127.0.0.10", "127.0.0.11", "127.0.0.12"):
        add_hosts(names, address)
    add_hosts(names, "127.0.0.10")  # once per address
    assert hosts.read_text().splitlines() == [
        "127.0.0.1 localhost",
        "127.0.0.10 function-platform.crossplane-system",
        "127.0.0.11 function-platform.crossplane-system",
        "127.0.0.12 function-platform.crossplane-system",
    ]
    remove_hosts("127.0.0.11")
    remove_hosts("127.0.0.1")  # no line of 127.0.0.10 or .12 is touched
    assert hosts.read_text().splitlines() == [
        "127.0.0.10 function-platform.crossplane-system",
        "127.0.0.12 function-platform.crossplane-system",
    ]
