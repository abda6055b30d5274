"""Every cloud lays out the same way: capability ``X`` is in ``clouds/<cloud>/<X.home>.py``.

That is what makes "where does GCP build buckets?" answerable without searching, and a new
cloud reviewable file by file against an existing one. Each capability declares its home
(``add_bucket.home``); these tests hold every registered implementation to it,
and say which values are deliberately not answered everywhere.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any

import fnplatform
import fnplatform.clouds
import fnplatform.library
import pytest
from fnplatform.cloud import CLOUDS as CLOUD_NAMES
from fnplatform.cloud import cloud_profiles
from fnplatform.library.bucket import bucket_deleted_with_objects
from fnplatform.library.capability import Capability, Flag, PerCloud, Value
from fnplatform.library.cluster import autoscaler_values, cluster_scope_from_plane, running_version
from fnplatform.library.database import global_private_network
from fnplatform.library.failover import bucket_geo_replication, bucket_replication
from fnplatform.library.key import key_deletable

from tests.support.table import case

CLOUDS = sorted(m.name for m in pkgutil.iter_modules(fnplatform.clouds.__path__) if m.ispkg)
#: Values some clouds answer on purpose, and why (all others: every cloud providing their
#: capability answers them).
OPTIONAL: dict[PerCloud[Any], str] = {
    autoscaler_values: "only clouds whose node pools do not resize themselves",
    running_version: "read only for the cluster-autoscaler chart (autoscaler clouds)",
    bucket_replication: "a flag: a cloud says it replicates buckets, or does without",
    bucket_geo_replication: "a flag: a cloud says a bucket keeps its own geo copy",
    global_private_network: "a flag: a cloud whose one network serves every region",
    cluster_scope_from_plane: "a flag: a cloud whose clusters the plane id scopes",
    key_deletable: "a flag: a cloud that can delete a key (Cloud KMS cannot)",
    bucket_deleted_with_objects: "a flag: a cloud whose bucket goes with its objects",
}


#: Every capability module of the library (``library/<home>.py``), and what each declares.
LIBRARY = [
    importlib.import_module(f"fnplatform.library.{m.name}")
    for m in pkgutil.iter_modules(fnplatform.library.__path__)
]
CALLS: list[Capability[Any]] = sorted(
    {v for module in LIBRARY for v in vars(module).values() if isinstance(v, Capability)},
    key=lambda c: c.name,
)
VALUES: list[Value[Any, Any] | Flag] = sorted(
    {v for module in LIBRARY for v in vars(module).values() if isinstance(v, Value | Flag)},
    key=lambda v: v.name,
)


@pytest.mark.parametrize("capability", [*CALLS, *VALUES], ids=lambda c: c.name)
def test_each_capability_lives_in_the_library_module_of_its_home(
    capability: PerCloud[Any],
) -> None:
    # one module per capability: its spec, call and values in library/<home>.py, the file
    # every cloud implements it in (clouds/<cloud>/<home>.py)
    holders = [m.__name__ for m in LIBRARY if any(v is capability for v in vars(m).values())]
    assert holders == [f"fnplatform.library.{capability.home}"], (capability.name, holders)


def test_the_clouds_are_discovered() -> None:
    # every cloud package is loaded, each is a cloud of the Cloud type (the Literal the XRD
    # enums are generated from: a new cloud's folder fails here until it is added there), and
    # each declares its profile (clouds/<cloud>/profile.py)
    assert fnplatform.clouds.discover() == CLOUDS == sorted(CLOUD_NAMES)
    assert sorted(p.name for p in cloud_profiles()) == CLOUDS
    loaded = {m.__name__ for m in fnplatform.clouds.load()}
    for cloud in CLOUDS:
        package = importlib.import_module(f"fnplatform.clouds.{cloud}")
        files = {f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)}
        assert files <= loaded


@pytest.mark.parametrize("capability", CALLS, ids=lambda c: c.name)
def test_every_builder_and_extra_lives_in_its_home(capability: Capability[Any]) -> None:
    assert capability.clouds(), f"no cloud provides {capability.name}"
    for cloud in capability.clouds():
        builder = capability.builder(cloud)
        assert builder is not None
        assert builder.__module__ == capability.module(cloud), (cloud, builder)
        for extra in capability.extras(cloud):
            assert extra.__module__ == capability.module(cloud), (cloud, extra)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: v.name)
def test_every_answer_lives_in_its_home(value: Value[Any, Any] | Flag) -> None:
    assert value.clouds(), f"no cloud answers {value.name}"
    for cloud in value.clouds():
        module = importlib.import_module(value.module(cloud))
        if isinstance(value, Flag):  # no function to ask: the declaration is in the file
            declared = rf"\b{value.name}\.on\(\s*[\"']{cloud}[\"']\s*\)"
            assert re.search(declared, inspect.getsource(module)), (cloud, module.__name__)
            continue
        answer = value.answer(cloud)
        assert answer is not None
        assert answer.__module__ == module.__name__, (cloud, answer)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: v.name)
def test_a_value_answers_wherever_its_capability_is_provided(
    value: Value[Any, Any] | Flag,
) -> None:
    owners = [c for c in CALLS if c.home == value.home]
    assert owners, f"{value.name}: no capability lives in {value.home}"
    providing = set.union(*(set(c.clouds()) for c in owners))
    if value in OPTIONAL:
        assert set(value.clouds()) <= providing
        assert set(value.clouds()) != providing, (
            f"{value.name} is answered everywhere now: drop it from OPTIONAL"
        )
    else:
        assert set(value.clouds()) == providing


@pytest.mark.parametrize("cloud", CLOUDS)
def test_every_cloud_has_its_kinds_module(cloud: str) -> None:
    kinds = importlib.import_module(f"fnplatform.clouds.{cloud}.kinds")
    assert kinds.__file__ and kinds.__file__.endswith(f"{cloud}/kinds.py")


def desired_reads(source: str) -> list[int]:
    """Lines of ``source`` that read ``<anything>.desired`` (what a pass emitted so far)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "desired"
    )


def test_the_desired_check_finds_a_read() -> None:
    # the rule below is only as good as its finder: a read in any form is found
    source = "x = comp.desired.get('a')\nif 'b' in comp.desired:\n    y = 1\nz = comp.spec\n"
    assert desired_reads(source) == [1, 2]


def test_no_cloud_builder_reads_what_was_emitted() -> None:
    # A builder depends on its arguments only (docs/architecture.md, "Builders see only their
    # spec"): what it needs of another call's result comes in its spec or value arguments,
    # passed by the composer that knows it, never from ``comp.desired``.
    root = Path(fnplatform.clouds.__path__[0])
    reads = [
        f"{path.relative_to(root.parent)}:{line}"
        for path in sorted(root.rglob("*.py"))
        for line in desired_reads(path.read_text())
    ]
    assert reads == [], f"cloud modules read comp.desired: {', '.join(reads)}"


def cloud_names_in(source: str, clouds: tuple[str, ...] = CLOUD_NAMES) -> list[tuple[int, str]]:
    """``(line, cloud)`` where ``source`` names a cloud to decide by it.

    A string constant equal to a cloud's name (``"aws"``) counts where code branches or looks
    up by it: an operand of a comparison (``cloud == "gcp"``, ``cloud in (...)``), an element
    of a tuple, list or set literal, a key of a dict literal (a per-cloud table), a subscript
    (``table["azure"]``) or a ``case`` pattern. It does not count as a call's argument (the
    AWS-only async-actor module places itself with ``comp.place("aws", ...)``; an API field's
    default, ``Field("aws")``), as a dict's value (a label ``provider: aws``, KEDA's pod
    identity ``provider: aws``), or in text (docstrings, messages).
    """
    names = set(clouds)

    def named(node: ast.AST | None) -> list[ast.Constant]:
        return (
            [node]
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in names
            else []
        )

    found: list[ast.Constant] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found.extend(named(operand))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for element in node.elts:
                found.extend(named(element))
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                found.extend(named(key))
        elif isinstance(node, ast.Subscript):
            found.extend(named(node.slice))
        elif isinstance(node, ast.MatchValue):
            found.extend(named(node.value))
    return sorted({(c.lineno, str(c.value)) for c in found})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        case("a comparison", 'if c == "gcp":\n    pass\n', [(1, "gcp")], id="compare"),
        case("membership", 'x = c in ("gcp", "azure")\n', [(1, "azure"), (1, "gcp")], id="in"),
        case("a per-cloud table", 'T = {\n    "aws": 1,\n}\n', [(2, "aws")], id="dict-key"),
        case("a lookup by cloud", 'v = table["azure"]\n', [(1, "azure")], id="subscript"),
        case("a case", 'match c:\n    case "aws":\n        pass\n', [(2, "aws")], id="match"),
        case("a call argument", 'comp.place("aws", region=r)\n', [], id="argument"),
        case("a dict value (a label)", 'L = {"provider": "aws"}\n', [], id="dict-value"),
        case("text", '"""On aws, ..."""\nx = f"{c} is not aws"\n', [], id="text"),
        case("no cloud's name", 'if c == "openstack":\n    pass\n', [], id="other"),
    ],
)
def test_the_cloud_name_check_finds_a_branch(source: str, expected: list[tuple[int, str]]) -> None:
    # the rules below are only as good as this finder
    assert cloud_names_in(source) == expected


#: The one place outside clouds/ that spells the clouds: the Literal the XRD enums come from.
NAMES_THE_CLOUDS = "cloud.py"


def test_no_composer_or_shared_module_names_a_cloud() -> None:
    # Everything a composer or the shared floor needs of a cloud it asks the cloud: a value or
    # flag on the library (values.*), or the cloud's profile (fnplatform.cloud.cloud_profile).
    # So a new cloud is its folder, never an edit in a composer (docs/extending.md, "Adding a
    # cloud").
    root = Path(fnplatform.__path__[0])
    found = [
        f"{path.relative_to(root)}:{line} {cloud}"
        for path in sorted(root.rglob("*.py"))
        if path.relative_to(root).parts[0] != "clouds"
        and str(path.relative_to(root)) != NAMES_THE_CLOUDS
        for line, cloud in cloud_names_in(path.read_text())
    ]
    assert found == [], f"outside clouds/, code decides by a cloud's name: {', '.join(found)}"
