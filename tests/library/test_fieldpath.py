"""Field paths mean what they mean to Crossplane: fnplatform.fieldpath against crossplane-runtime.

The tables are crossplane-runtime v2.4.0's own (``pkg/fieldpath/fieldpath_test.go``:
``TestSegments``, ``TestFieldOrIndex``, ``TestParse``; ``pkg/fieldpath/paved_test.go``:
``TestGetValue``), case names kept, with Go's ``Field("x")`` written ``"x"`` and
``FieldOrIndex("0")`` written ``0``; then the forms users port from Compositions.
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform import fieldpath
from fnplatform.fieldpath import FieldPathError, PathNotFound, PathTypeError, Segments

# -- TestSegments: Segments.String -------------------------------------------------------


@pytest.mark.parametrize(
    ("segments", "want"),
    [
        pytest.param(("spec",), "spec", id="SingleField"),
        pytest.param((0,), "[0]", id="SingleIndex"),
        pytest.param(
            ("spec", "containers", 0, "name"), "spec.containers[0].name", id="FieldsAndIndex"
        ),
        pytest.param(("data", ".config.yml"), "data[.config.yml]", id="PeriodsInField"),
        pytest.param(("spec", "containers", "*", "name"), "spec.containers[*].name", id="Wildcard"),
    ],
)
def test_segments_string(segments: Segments, want: str) -> None:
    assert fieldpath.to_string(segments) == want


# -- TestFieldOrIndex: what brackets hold --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("coolField", "coolField", id="Field"),
        pytest.param("'coolField'", "coolField", id="QuotedField"),
        pytest.param("'cool.Field'", "cool.Field", id="QuotedFieldWithPeriods"),
        pytest.param("3", 3, id="Index"),
        pytest.param("-3", "-3", id="Negative"),
        pytest.param("3.0", "3.0", id="Float"),
        pytest.param(str(2**32), str(2**32), id="Overflow"),
        # Not in Go's table, what ParseUint(s, 10, 32) says: the largest index, leading zeros.
        pytest.param(str(2**32 - 1), 2**32 - 1, id="MaxUint32"),
        pytest.param("007", 7, id="LeadingZeros"),
        pytest.param("'0'", "0", id="QuotedDigitsAreAField"),
    ],
)
def test_field_or_index(text: str, want: str | int) -> None:
    assert fieldpath.parse(f"[{text}]") == (want,)


# -- TestParse -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param("spec", ("spec",), id="SingleField"),
        pytest.param("[0]", (0,), id="SingleIndex"),
        pytest.param("metadata.name", ("metadata", "name"), id="TwoFields"),
        pytest.param(
            "fields[1].state.current", ("fields", 1, "state", "current"), id="APIConventionsExample"
        ),
        pytest.param("items[0]", ("items", 0), id="SimpleIndex"),
        pytest.param(
            "spec.containers[0].name", ("spec", "containers", 0, "name"), id="FieldsAndIndex"
        ),
        pytest.param("nested[0][1].name", ("nested", 0, 1, "name"), id="NestedArray"),
        pytest.param(
            "spec[containers][0].name", ("spec", "containers", 0, "name"), id="BracketStyleField"
        ),
        pytest.param("data[.config.yml]", ("data", ".config.yml"), id="BracketFieldWithPeriod"),
        pytest.param(
            "metadata.labels['app.hash']",
            ("metadata", "labels", "app.hash"),
            id="QuotedFieldWithPeriodInBracket",
        ),
        # The package comment's valid examples.
        pytest.param(
            "metadata.annotations['crossplane.io/external-name']",
            ("metadata", "annotations", "crossplane.io/external-name"),
            id="PackageExampleQuotedAnnotation",
        ),
        pytest.param("spec.items[0][8]", ("spec", "items", 0, 8), id="PackageExampleNested"),
        pytest.param("apiVersion", ("apiVersion",), id="PackageExampleField"),
        pytest.param("[42]", (42,), id="PackageExampleIndex"),
        # Go's rules at the edges: digits after a period are a field; Field trims quotes
        # everywhere; after a bracket a field may follow without a period; "" is no segment.
        pytest.param("a.0", ("a", "0"), id="DigitsAfterAPeriodAreAField"),
        pytest.param("metadata.'name'", ("metadata", "name"), id="QuotesTrimmedOutsideBrackets"),
        pytest.param("a[0]b", ("a", 0, "b"), id="FieldRightAfterBracket"),
        pytest.param("", (), id="Empty"),
    ],
)
def test_parse(path: str, want: Segments) -> None:
    assert fieldpath.parse(path) == want


@pytest.mark.parametrize(
    ("path", "error"),
    [
        pytest.param(".metadata.name", "unexpected '.' at position 0", id="LeadingPeriod"),
        pytest.param("metadata.name.", "unexpected '.' at position 13", id="TrailingPeriod"),
        pytest.param(
            "spec.containers.[0].name",
            "unexpected '[' at position 16",
            id="BracketsFollowingPeriod",
        ),
        pytest.param("metadata..name", "unexpected '.' at position 9", id="DoublePeriod"),
        pytest.param("metadata.]name", "unexpected ']' at position 9", id="DanglingRightBracket"),
        pytest.param(
            "spec[bracketed[name]]", "unexpected '[' at position 14", id="DoubleOpenBracket"
        ),
        pytest.param("spec[name", "unterminated '[' at position 4", id="DanglingLeftBracket"),
        pytest.param("spec[]", "unexpected ']' at position 5", id="EmptyBracket"),
        # Positions count UTF-8 bytes, as Go's do.
        pytest.param("étiquette]", "unexpected ']' at position 10", id="BytePositions"),
        pytest.param(
            "metadata.labels[cloud", "unterminated '[' at position 15", id="UnterminatedLabel"
        ),
    ],
)
def test_parse_errors(path: str, error: str) -> None:
    with pytest.raises(FieldPathError) as raised:
        fieldpath.parse(path)
    assert str(raised.value) == error


# -- TestGetValue --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "data", "want"),
    [
        pytest.param("metadata.name", {"metadata": {"name": "cool"}}, "cool", id="MetadataName"),
        pytest.param(
            "spec.containers[0].name",
            {"spec": {"containers": [{"name": "cool"}]}},
            "cool",
            id="ContainerName",
        ),
        pytest.param("items[0][1]", {"items": [["a", "b"]]}, "b", id="NestedArray"),
        pytest.param(
            "metadata.ownerRefs[0].controller",
            {"metadata": {"ownerRefs": [{"controller": True}]}},
            True,
            id="OwnerRefController",
        ),
        pytest.param("metadata.version", {"metadata": {"version": 2}}, 2, id="MetadataVersion"),
        pytest.param("metadata.version", {"metadata": {"version": 2.0}}, 2.0, id="SomeFloat"),
        pytest.param("metadata.labels", {"metadata": {"labels": None}}, None, id="PresentNull"),
    ],
)
def test_get_value(path: str, data: dict[str, Any], want: Any) -> None:
    assert fieldpath.lookup(data, fieldpath.parse(path)) == want


@pytest.mark.parametrize(
    ("path", "data", "kind", "error"),
    [
        pytest.param(
            "metadata.name",
            {"metadata": {"nope": "cool"}},
            PathNotFound,
            "metadata.name: no such field",
            id="MetadataNope",
        ),
        pytest.param(
            "spec.containers[1].name",
            {"spec": {"containers": [{"name": "cool"}]}},
            PathNotFound,
            "spec.containers[1]: no such element",
            id="InsufficientContainers",
        ),
        pytest.param(
            "metadata[1]",
            {"metadata": {"nope": "cool"}},
            PathTypeError,
            "metadata: not an array",
            id="NotAnArray",
        ),
        pytest.param(
            "spec.containers[nope].name",
            {"spec": {"containers": [{"name": "cool"}]}},
            PathTypeError,
            "spec.containers: not an object",
            id="NotAnObject",
        ),
        pytest.param(
            "spec.containers[*].name",
            {"spec": {"containers": None}},
            PathNotFound,
            "spec.containers: expected map, got nil",
            id="NilParent",
        ),
    ],
)
def test_get_value_errors(
    path: str, data: dict[str, Any], kind: type[Exception], error: str
) -> None:
    with pytest.raises(kind) as raised:
        fieldpath.lookup(data, fieldpath.parse(path))
    assert str(raised.value) == error


def test_a_malformed_path_is_an_error_not_a_miss() -> None:
    """Go's MalformedPath: ``GetValue("spec[]")`` fails to parse; so does the library's read."""
    with pytest.raises(FieldPathError, match=r"unexpected '\]' at position 5"):
        fieldpath.get({}, "spec[]")


# -- the forms users port from Compositions --------------------------------------------------

COMPOSITE = {
    "metadata": {
        "labels": {
            "cloud": "gcp",
            "planeType": "production",
            "crossplane.io/claim-name": "prod-eu",
        },
        "annotations": {"a.b/c": "annotated"},
    },
    "spec": {"items": [{"name": "first"}], "data": {".config.yml": "x"}},
}


@pytest.mark.parametrize(
    ("path", "want"),
    [
        ("metadata.labels.cloud", "gcp"),
        ("metadata.labels[cloud]", "gcp"),
        ("metadata.labels['cloud']", "gcp"),
        ('metadata.labels["cloud"]', "gcp"),
        ("metadata[labels][cloud]", "gcp"),
        ("metadata.labels[planeType]", "production"),
        ("metadata.labels[crossplane.io/claim-name]", "prod-eu"),
        ("metadata.labels['crossplane.io/claim-name']", "prod-eu"),
        ("metadata.annotations['a.b/c']", "annotated"),
        ("metadata.annotations[a.b/c]", "annotated"),
        ("spec.items[0].name", "first"),
        ("spec.data[.config.yml]", "x"),
    ],
)
def test_paths_users_port_from_compositions(path: str, want: str) -> None:
    assert fieldpath.get(COMPOSITE, path) == want


@pytest.mark.parametrize(
    "path",
    [
        "metadata.labels.crossplane.io/claim-name",  # periods separate fields outside brackets
        "metadata.labels[zone]",
        "spec.items[1].name",
        "spec.items.0.name",
        "metadata.labels[0]",
    ],
)
def test_what_is_not_there_reads_as_the_default(path: str) -> None:
    assert fieldpath.get(COMPOSITE, path, "unset") == "unset"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "metadata.labels[cloud",
            "cannot parse \"metadata.labels[cloud\": unterminated '[' at position 15",
        ),
        ("metadata.labels.", "cannot parse \"metadata.labels.\": unexpected '.' at position 15"),
        ("", "must name a field, such as metadata.labels[cloud]"),
    ],
)
def test_a_path_a_user_wrote_is_refused_saying_why(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=r".+") as raised:
        fieldpath.user_path(path)
    assert str(raised.value) == message


def test_a_long_path_is_quoted_cut() -> None:
    path = "a" * 1000 + "["
    with pytest.raises(ValueError, match=r".+") as raised:
        fieldpath.user_path(path)
    assert len(str(raised.value)) < 400
    assert str(raised.value).endswith("unterminated '[' at position 1000")


DATA = {"a": {"b": [{"c": 1}, None, [2, {"d.e": None}]], "s": "text", "n": None}, "0": "zero"}


@pytest.mark.parametrize(
    "path",
    [
        "a",
        "a.b",
        "a.b[0].c",
        "a.b[1]",
        "a.b[1].c",
        "a.b[2][1][d.e]",
        "a.b[2][5]",
        "a.b.c",
        "a.s",
        "a.s.x",
        "a.s[0]",
        "a.n",
        "a.n.x",
        "a.n[0]",
        "a[b][0][c]",
        "0",
        "[0]",
        "a.missing",
        "missing.x",
        "",
    ],
)
def test_get_is_lookup_with_a_default(path: str) -> None:
    """``get`` walks without raising; it must answer what ``lookup`` does, misses aside."""
    try:
        want = fieldpath.lookup(DATA, fieldpath.parse(path))
    except (PathNotFound, PathTypeError):
        want = "unset"
    assert fieldpath.get(DATA, path, "unset") == want
