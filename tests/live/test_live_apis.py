"""The live control plane accepts what a user installs: every XRD of apis/ (both forms) becomes
Established (and Offered where it has a claim), every Composition is accepted by the API
server and Crossplane, and the function's package installs and turns Healthy (issue 21, 1)."""

from __future__ import annotations

import pytest

from tests.live.kube import condition, docs_of, is_true, xrd_serving
from tests.live.layers import XRD, Live, form_files

pytestmark = pytest.mark.live


def test_every_xrd_becomes_established(platform: Live) -> None:
    kube = platform.kube
    xrds = docs_of(*form_files(platform.form, "definition.yaml"))
    assert len(xrds) == 8, "every module's XRDs (openstack has four)"
    problems: dict[str, object] = {}
    for doc in xrds:
        obj = kube.get(*XRD, doc["metadata"]["name"])
        if not xrd_serving(obj, doc):
            problems[doc["metadata"]["name"]] = (
                condition(obj, "Established"),
                condition(obj, "Offered"),
            )
    assert problems == {}


def test_every_composition_is_accepted(platform: Live) -> None:
    kube = platform.kube
    comps = docs_of(*form_files(platform.form, "composition.yaml"))
    assert len(comps) == 8  # each API's own; not the design documents' optional copies
    for doc in comps:
        obj = kube.get("apiextensions.crossplane.io/v1", "Composition", doc["metadata"]["name"])
        assert obj is not None, doc["metadata"]["name"]
        # Crossplane revisions every accepted Composition
        revs = [
            r
            for r in kube.list("apiextensions.crossplane.io/v1", "CompositionRevision")
            if (r.metadata.labels or {}).get("crossplane.io/composition-name")
            == doc["metadata"]["name"]
        ]
        assert revs, f"no CompositionRevision for {doc['metadata']['name']}"


def test_function_is_healthy_over_crossplane_issued_mtls(crossplane: Live) -> None:
    kube = crossplane.kube
    fn = kube.get("pkg.crossplane.io/v1", "Function", "function-platform")
    assert is_true(fn, "Healthy"), condition(fn, "Healthy")
    revs = kube.list("pkg.crossplane.io/v1", "FunctionRevision")
    active = [r for r in revs if r.spec.desiredState == "Active"]
    assert len(active) == 1
    # the endpoint Crossplane dials: the headless Service DNS name, TLS from its own CA
    assert active[0].status.endpoint == "dns:///function-platform.crossplane-system:9443"
    assert active[0].spec.tlsServerSecretName == "function-platform-tls-server"
    assert crossplane.kubelet is not None
    assert crossplane.kubelet.running, "the kubelet stand-in runs the function's Deployment"
