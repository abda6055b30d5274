"""``crossplane resource validate`` refuses each bad claim of tests/support/admission.py with
the message of the XRD's CEL rule (issue 32 item 4), in both forms: the composite the claim
makes (v1, cluster-scoped) and the namespaced XR (v2), each checked against its form's XRDs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.admission import BAD_CLAIMS
from tools import render_examples as render_tool
from tools.generate_apis import module_apis

pytestmark = pytest.mark.e2e

CLAIM_ONLY = ("compositionRef", "compositionSelector", "writeConnectionSecretToRef")


def _composite(claim: dict[str, Any], module: str, namespaced: bool) -> dict[str, Any]:
    api = module_apis()[module]
    metadata = {"name": claim["metadata"]["name"]}
    if namespaced:
        metadata["namespace"] = claim["metadata"]["namespace"]
    spec = {k: v for k, v in claim["spec"].items() if k not in CLAIM_ONLY}
    return {"apiVersion": claim["apiVersion"], "kind": api.kind, "metadata": metadata, "spec": spec}


@pytest.mark.parametrize("namespaced", [False, True], ids=["v1", "namespaced"])
def test_resource_validate_refuses_each_bad_claim(tmp_path: Path, namespaced: bool) -> None:
    cli = render_tool.find_cli()
    if cli is None:
        pytest.skip("no .bin/crossplane (make cli)")
    for bad in BAD_CLAIMS:
        path = tmp_path / f"{bad.id}.yaml"
        path.write_text(yaml.safe_dump(_composite(bad.claim(), bad.module, namespaced)))
        result = subprocess.run(
            render_tool.validate_command(
                cli, path, tmp_path / "validate-cache", namespaced=namespaced
            ),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        output = result.stdout + result.stderr
        assert result.returncode != 0, f"{bad.id}: validate passed:\n{output}"
        assert bad.words in output, f"{bad.id}:\n{output}"
