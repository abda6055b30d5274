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

from tests.support.table import case

# -- TestSegments: Segments.String -------------------------------------------------------


@pytest.mark.parametrize(
    ("segments", "want"),
    [
        case("one field prints bare", ("spec",), "spec", id="SingleField"),
        case("one index prints in brackets", (0,), "[0]", id="SingleIndex"),
        case(
            "fields join with periods, indexes in brackets",
            ("spec", "containers", 0, "name"),
            "spec.containers[0].name",
            id="FieldsAndIndex",
        ),
        case(
            ("a field with periods prints in brackets, or it would read as several"),
            ("data", ".config.yml"),
            "data[.config.yml]",
            id="PeriodsInField",
        ),
        case(
            "a wildcard prints as an index in brackets",
            ("spec", "containers", "*", "name"),
            "spec.containers[*].name",
            id="Wildcard",
        ),
    ],
)
def test_segments_string(segments: Segments, want: str) -> None:
    assert fieldpath.to_string(segments) == want


# -- TestFieldOrIndex: what brackets hold --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        case("a plain word is a field", "coolField", "coolField", id="Field"),
        case(
            "single quotes around a field are trimmed", "'coolField'", "coolField", id="QuotedField"
        ),
        case(
            "quotes trimmed, periods inside kept: one field",
            "'cool.Field'",
            "cool.Field",
            id="QuotedFieldWithPeriods",
        ),
        case("digits are an index", "3", 3, id="Index"),
        case("a negative number is no index: a field", "-3", "-3", id="Negative"),
        case("a float is no index: a field", "3.0", "3.0", id="Float"),
        case("past uint32 is no index: a field", str(2**32), str(2**32), id="Overflow"),
        case(
            (
                "Not in Go's table, what ParseUint(s, 10, 32) says: the largest "
                "index, leading zeros."
            ),
            str(2**32 - 1),
            2**32 - 1,
            id="MaxUint32",
        ),
        case("leading zeros still read as that index", "007", 7, id="LeadingZeros"),
        case(
            "quoted digits are a field named by them, not an index",
            "'0'",
            "0",
            id="QuotedDigitsAreAField",
        ),
    ],
)
def test_field_or_index(text: str, want: str | int) -> None:
    assert fieldpath.parse(f"[{text}]") == (want,)


# -- TestParse -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "want"),
    [
        case("one field", "spec", ("spec",), id="SingleField"),
        case("one index", "[0]", (0,), id="SingleIndex"),
        case(
            "two fields split at the period", "metadata.name", ("metadata", "name"), id="TwoFields"
        ),
        case(
            "the Kubernetes API conventions' own example",
            "fields[1].state.current",
            ("fields", 1, "state", "current"),
            id="APIConventionsExample",
        ),
        case("an index after a field", "items[0]", ("items", 0), id="SimpleIndex"),
        case(
            "fields and an index mixed",
            "spec.containers[0].name",
            ("spec", "containers", 0, "name"),
            id="FieldsAndIndex",
        ),
        case(
            "arrays of arrays: two indexes in a row",
            "nested[0][1].name",
            ("nested", 0, 1, "name"),
            id="NestedArray",
        ),
        case(
            "a field may be written in brackets",
            "spec[containers][0].name",
            ("spec", "containers", 0, "name"),
            id="BracketStyleField",
        ),
        case(
            "a field holding periods, in brackets, stays one field",
            "data[.config.yml]",
            ("data", ".config.yml"),
            id="BracketFieldWithPeriod",
        ),
        case(
            "a quoted field in brackets keeps its periods",
            "metadata.labels['app.hash']",
            ("metadata", "labels", "app.hash"),
            id="QuotedFieldWithPeriodInBracket",
        ),
        case(
            "The package comment's valid examples.",
            "metadata.annotations['crossplane.io/external-name']",
            ("metadata", "annotations", "crossplane.io/external-name"),
            id="PackageExampleQuotedAnnotation",
        ),
        case(
            "the package comment's nested indexes",
            "spec.items[0][8]",
            ("spec", "items", 0, 8),
            id="PackageExampleNested",
        ),
        case(
            "the package comment's single field",
            "apiVersion",
            ("apiVersion",),
            id="PackageExampleField",
        ),
        case("the package comment's single index", "[42]", (42,), id="PackageExampleIndex"),
        case(
            (
                "Go's rules at the edges: digits after a period are a field; "
                "Field trims quotes everywhere; after a bracket a field may "
                'follow without a period; "" is no segment.'
            ),
            "a.0",
            ("a", "0"),
            id="DigitsAfterAPeriodAreAField",
        ),
        case(
            "quotes are trimmed outside brackets too",
            "metadata.'name'",
            ("metadata", "name"),
            id="QuotesTrimmedOutsideBrackets",
        ),
        case(
            "a field may follow a bracket without a period",
            "a[0]b",
            ("a", 0, "b"),
            id="FieldRightAfterBracket",
        ),
        case("an empty path is no segment at all", "", (), id="Empty"),
    ],
)
def test_parse(path: str, want: Segments) -> None:
    assert fieldpath.parse(path) == want


@pytest.mark.parametrize(
    ("path", "error"),
    [
        case(
            "a path can't start with a period",
            ".metadata.name",
            "unexpected '.' at position 0",
            id="LeadingPeriod",
        ),
        case(
            "a path can't end with a period",
            "metadata.name.",
            "unexpected '.' at position 13",
            id="TrailingPeriod",
        ),
        case(
            "a bracket can't follow a period",
            "spec.containers.[0].name",
            "unexpected '[' at position 16",
            id="BracketsFollowingPeriod",
        ),
        case(
            "two periods in a row leave an empty field",
            "metadata..name",
            "unexpected '.' at position 9",
            id="DoublePeriod",
        ),
        case(
            "a closing bracket without an opening one",
            "metadata.]name",
            "unexpected ']' at position 9",
            id="DanglingRightBracket",
        ),
        case(
            "brackets don't nest",
            "spec[bracketed[name]]",
            "unexpected '[' at position 14",
            id="DoubleOpenBracket",
        ),
        case(
            "an opening bracket left open",
            "spec[name",
            "unterminated '[' at position 4",
            id="DanglingLeftBracket",
        ),
        case(
            "empty brackets name nothing",
            "spec[]",
            "unexpected ']' at position 5",
            id="EmptyBracket",
        ),
        case(
            "Positions count UTF-8 bytes, as Go's do.",
            "étiquette]",
            "unexpected ']' at position 10",
            id="BytePositions",
        ),
        case(
            "a label key left unterminated, named at its bracket",
            "metadata.labels[cloud",
            "unterminated '[' at position 15",
            id="UnterminatedLabel",
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
        case(
            "a field of a field",
            "metadata.name",
            {"metadata": {"name": "cool"}},
            "cool",
            id="MetadataName",
        ),
        case(
            "a field of an array element",
            "spec.containers[0].name",
            {"spec": {"containers": [{"name": "cool"}]}},
            "cool",
            id="ContainerName",
        ),
        case(
            "an element of an element",
            "items[0][1]",
            {"items": [["a", "b"]]},
            "b",
            id="NestedArray",
        ),
        case(
            "a boolean value is returned as is",
            "metadata.ownerRefs[0].controller",
            {"metadata": {"ownerRefs": [{"controller": True}]}},
            True,
            id="OwnerRefController",
        ),
        case(
            "an integer value is returned as is",
            "metadata.version",
            {"metadata": {"version": 2}},
            2,
            id="MetadataVersion",
        ),
        case(
            "a float value is returned as is",
            "metadata.version",
            {"metadata": {"version": 2.0}},
            2.0,
            id="SomeFloat",
        ),
        case(
            "a field present with null returns None, not 'not found'",
            "metadata.labels",
            {"metadata": {"labels": None}},
            None,
            id="PresentNull",
        ),
    ],
)
def test_get_value(path: str, data: dict[str, Any], want: Any) -> None:
    assert fieldpath.lookup(data, fieldpath.parse(path)) == want


@pytest.mark.parametrize(
    ("path", "data", "kind", "error"),
    [
        case(
            "a missing field is PathNotFound naming the path",
            "metadata.name",
            {"metadata": {"nope": "cool"}},
            PathNotFound,
            "metadata.name: no such field",
            id="MetadataNope",
        ),
        case(
            "an index past the end is PathNotFound naming the element",
            "spec.containers[1].name",
            {"spec": {"containers": [{"name": "cool"}]}},
            PathNotFound,
            "spec.containers[1]: no such element",
            id="InsufficientContainers",
        ),
        case(
            "indexing an object is a type error",
            "metadata[1]",
            {"metadata": {"nope": "cool"}},
            PathTypeError,
            "metadata: not an array",
            id="NotAnArray",
        ),
        case(
            "a field of an array is a type error",
            "spec.containers[nope].name",
            {"spec": {"containers": [{"name": "cool"}]}},
            PathTypeError,
            "spec.containers: not an object",
            id="NotAnObject",
        ),
        case(
            "a null parent is not found, with Go's wording",
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
        case("the label a composition reads with a period path", "metadata.labels.cloud", "gcp"),
        case("the same label in brackets", "metadata.labels[cloud]", "gcp"),
        case("in single-quoted brackets", "metadata.labels['cloud']", "gcp"),
        case("in double-quoted brackets", 'metadata.labels["cloud"]', "gcp"),
        case("every segment in brackets", "metadata[labels][cloud]", "gcp"),
        case("a camel-case label key", "metadata.labels[planeType]", "production"),
        case(
            "a label key with a slash and periods, in brackets unquoted",
            "metadata.labels[crossplane.io/claim-name]",
            "prod-eu",
        ),
        case("the same key quoted", "metadata.labels['crossplane.io/claim-name']", "prod-eu"),
        case(
            "an annotation key with periods and a slash, quoted",
            "metadata.annotations['a.b/c']",
            "annotated",
        ),
        case("the same key unquoted", "metadata.annotations[a.b/c]", "annotated"),
        case("a field of an array element", "spec.items[0].name", "first"),
        case("a field named with a leading period, in brackets", "spec.data[.config.yml]", "x"),
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
        case(
            "an unterminated bracket: Go's parse error, quoted with the path",
            "metadata.labels[cloud",
            "cannot parse \"metadata.labels[cloud\": unterminated '[' at position 15",
        ),
        case(
            "a trailing period: Go's parse error, quoted with the path",
            "metadata.labels.",
            "cannot parse \"metadata.labels.\": unexpected '.' at position 15",
        ),
        case(
            "an empty path names nothing: the message shows a path that would",
            "",
            "must name a field, such as metadata.labels[cloud]",
        ),
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
