"""The tree pass (sitemapkit.lint.tree): what it says about namespaces, whole or in pieces."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from sitemapkit.core.finding import Finding
from sitemapkit.lint.checks import Context
from sitemapkit.lint.tree import Scan, TreeLimits, dedupe, tree_pass
from sitemapkit.validation import Tuning, validate

NOW = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
IMAGE = "<image:image><image:loc>https://example.com/a.jpg</image:loc></image:image>"


def _findings(tmp_path: Path, text: str, tuning: Tuning | None = None) -> list[tuple[str, str]]:
    path = tmp_path / "sitemap.xml"
    path.write_text(text)
    report = validate(
        path,
        published_at="https://example.com/sitemap.xml",
        now=NOW,
        select=["SM1"],
        tuning=tuning,
    )
    return sorted((f.rule, f.message) for f in report.findings)


@pytest.mark.parametrize("tuning", [None, Tuning(pieces_from=0, piece=1)])
def test_a_misbound_prefix_is_reported_once_not_again_as_an_unknown_namespace(
    tmp_path: Path, tuning: Tuning | None
) -> None:
    text = (
        HEAD + URLSET + ' xmlns:image="http://example.com/img">\n<url><loc>https://example.com/a'
        "</loc>\n" + IMAGE + "</url>\n</urlset>\n"
    )
    found = _findings(tmp_path, text, tuning)
    assert [rule for rule, _ in found] == ["SM102"]


@pytest.mark.parametrize("tuning", [None, Tuning(pieces_from=0, piece=1)])
def test_another_unknown_namespace_keeps_its_warning(tmp_path: Path, tuning: Tuning | None) -> None:
    text = (
        HEAD + URLSET + ' xmlns:image="http://example.com/img" xmlns:foo="http://example.com/foo">'
        "\n<url><loc>https://example.com/a</loc>\n<foo:bar>1</foo:bar>\n"
        + IMAGE
        + "</url>\n</urlset>\n"
    )
    found = _findings(tmp_path, text, tuning)
    assert [rule for rule, _ in found] == ["SM102", "SM107"]
    assert "'http://example.com/foo'" in found[1][1]


def test_on_one_line_the_other_namespace_still_keeps_its_warning(tmp_path: Path) -> None:
    """Both namespaces start at the same place (line and entry): the warnings there are
    kept, so that none about another namespace is lost."""
    text = (
        HEAD + URLSET + ' xmlns:image="http://example.com/img" xmlns:foo="http://example.com/foo">'
        "<url><loc>https://example.com/a</loc><foo:bar>1</foo:bar>" + IMAGE + "</url></urlset>\n"
    )
    found = _findings(tmp_path, text)
    assert any("'http://example.com/foo'" in message for rule, message in found if rule == "SM107")


def test_a_near_miss_namespace_is_the_readers_sm102_only(tmp_path: Path) -> None:
    text = (
        HEAD + URLSET + ' xmlns:img="https://www.google.com/schemas/sitemap-image/1.1">\n'
        "<url><loc>https://example.com/a</loc>\n"
        + IMAGE.replace("image:", "img:")
        + "</url>\n</urlset>\n"
    )
    assert [rule for rule, _ in _findings(tmp_path, text)] == ["SM102"]


def test_the_tree_pass_records_where_misbound_namespaces_start() -> None:
    text = (
        HEAD + URLSET + ' xmlns:image="http://example.com/img">\n<url><loc> https://example.com/a'
        " </loc>\n" + IMAGE + "</url>\n</urlset>\n"
    ).encode()
    for limits in (TreeLimits(), TreeLimits(pieces_from=0, piece=1)):
        scan = tree_pass(text, "s.xml", Context(), limits)
        assert scan.misbound == {(4, "https://example.com/a")}
        assert scan.crowded == set()
        rules = [f.rule for f in scan.findings]
        assert "SM102" in rules and "SM107" not in rules  # SM109: the padded loc


def test_dedupe_keeps_the_known_findings_and_drops_repeats() -> None:
    known = [Finding("SM301", "error", "a", "s.xml", 3, None, "https://e.com/a")]
    candidates = [
        Finding("SM301", "error", "b", "s.xml", 3, 7, "https://e.com/a"),  # same rule, entry
        Finding("SM302", "error", "c", "s.xml", 3, 7, "https://e.com/a"),
        Finding("SM107", "warning", "d", "s.xml", 4, None, " https://e.com/a "),
        Finding("SM107", "warning", "e", "s.xml", 4, None, "https://e.com/b"),
    ]
    out = dedupe(candidates, known, {(4, "https://e.com/a")})
    assert [f.message for f in out] == ["c", "e"]
    assert isinstance(Scan(None, None, []).misbound, set)
