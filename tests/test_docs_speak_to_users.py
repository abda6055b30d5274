"""The README and docs/ speak to users: no internal tracker numbers, no review notes.

A reader cannot look up "issue 35 item 5" or "stop 40": those are numbers in this project's own
tracker, which users never see. A document says what a thing does and, where a choice follows
upstream behaviour, cites the upstream source. Upstream references stay: ``owner/repo#N``,
``repo#N`` and links (``https://github.com/<owner>/<repo>/issues/N``) are removed before the
patterns below are matched, so only a bare tracker citation fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

# Upstream references a document may cite: URLs, ``owner/repo#N`` and ``repo#N``.
UPSTREAM_REFERENCE = re.compile(r"https?://\S+|\b[\w.-]+(?:/[\w.-]+)?#\d+\b")


@dataclass(frozen=True)
class TrackerCitation:
    """A way a document cites our tracker, with why a reader is better served without it."""

    name: str
    pattern: re.Pattern[str]
    reason: str
    example: str


CITATIONS = (
    TrackerCitation(
        "issue number",
        re.compile(r"\b[Ii]ssues? #?\d+"),
        "an internal issue number ('issue 23', 'Issue 35:', '(issues 22, 23)'): say what the "
        "thing does; cite upstream as owner/repo#N or a link",
        "## Provider review (issue 23)",
    ),
    TrackerCitation(
        "item number",
        re.compile(r"\b[Ii]tems? \d+"),
        "an item of an internal issue ('item 14', 'issue 22 item 19'): say what the thing does",
        "EKS node groups follow the control-plane version (item 14).",
    ),
    TrackerCitation(
        "section sign",
        re.compile(r"§ ?\d+"),
        "a section of an internal issue ('issue 8 §2'): say what the section is about",
        "## Library capabilities (§2) this module added",
    ),
    TrackerCitation(
        "stop number",
        re.compile(r"\b[Ss]tops? \d+\b"),
        "a numbered stop of an internal review ('stop 40'): say what was found and done",
        "Found at stop 40 of the walkthrough.",
    ),
    TrackerCitation(
        "tracker anchor",
        re.compile(r"#[\w-]*\b(?:issues?|items?)-\d+"),
        "a link to a heading that carries a tracker number: rename the heading, fix the link",
        "see [Routing](#routing-failover-or-latency-issue-35-item-4)",
    ),
    TrackerCitation(
        "review note",
        re.compile(r"\b[Rr]eview notes?\b|\b[Pp]rovider review\b|\bin this review\b"),
        "a note about our own review ('Provider review', 'Fixed in this review'): name the "
        "section by what it holds ('What the providers do with these resources')",
        "Fixed in this review: **bold**.",
    ),
    TrackerCitation(
        "the issue asks",
        re.compile(r"\b(?:the|this) issue (?:asks|asked|says|wants)\b"),
        "what an internal issue asked for: say what the thing does, or what is missing",
        "a refusal the issue asks for",
    ),
)

# Upstream references, which every pattern must let through.
UPSTREAM_EXAMPLES = (
    ("owner/repo#N", "Upstream this is crossplane/crossplane#7108, closed as stale."),
    ("repo#N", "Upstream this is crossplane#7108."),
    (
        "a bare #N after an upstream one",
        "hashicorp/terraform-provider-azurerm#25021, closing #24741",
    ),
    (
        "a link to an upstream issue",
        "([provider-helm#297](https://github.com/crossplane-contrib/provider-helm/issues/297))",
    ),
    ("a certificate issued", "the old one served until the new one is issued"),
    ("an OIDC issuer", "the cluster's OIDC issuer, client `sts.amazonaws.com`"),
    ("a field path with an index", "`spec.items[0].name`"),
)


def tracker_citations(line: str) -> list[TrackerCitation]:
    """The citations a line makes once its upstream references are taken out."""
    text = UPSTREAM_REFERENCE.sub("", line)
    return [citation for citation in CITATIONS if citation.pattern.search(text)]


@pytest.mark.parametrize("citation", CITATIONS, ids=[c.name for c in CITATIONS])
def test_each_pattern_catches_its_example(citation: TrackerCitation) -> None:
    """A pattern that matches nothing would let every document pass."""
    assert citation in tracker_citations(citation.example), (
        f"{citation.name}: does not catch its own example {citation.example!r} ({citation.reason})"
    )


@pytest.mark.parametrize(
    ("line", "reason"),
    [(line, reason) for reason, line in UPSTREAM_EXAMPLES],
    ids=[reason for reason, _ in UPSTREAM_EXAMPLES],
)
def test_upstream_references_and_ordinary_words_are_allowed(line: str, reason: str) -> None:
    assert tracker_citations(line) == [], f"{reason}: {line!r} is flagged but should be allowed"


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_a_document_cites_no_internal_tracker(document: Path) -> None:
    problems = [
        f"{document.relative_to(ROOT)}:{number}: {citation.name}: {citation.reason}\n"
        f"    {line.strip()}"
        for number, line in enumerate(document.read_text().splitlines(), start=1)
        for citation in tracker_citations(line)
    ]
    assert problems == [], "cites our tracker, which users cannot read:\n" + "\n".join(problems)
