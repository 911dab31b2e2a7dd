"""Edge cases of the checks (lint/checks/) and of the validator's driver (validation.py)."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.finding import Finding
from sitemapkit.lint.checks import (
    Context,
    FileChecks,
    SetChecks,
    check_compression,
    resolve_places,
)
from sitemapkit.lint.schema import date_rule
from sitemapkit.validation import Fetched, validate

from ..conftest import urlset

NOW = dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC)
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XHTML = ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def index(*rows: str) -> str:
    return HEAD + f"<sitemapindex {NS}>\n" + "".join(f"{r}\n" for r in rows) + "</sitemapindex>\n"


def sitemap(loc: str, lastmod: str = "2024-05-01") -> str:
    return f"<sitemap><loc>{loc}</loc><lastmod>{lastmod}</lastmod></sitemap>"


def rules(findings: list[Finding]) -> list[tuple[str, int | None]]:
    return [(f.rule, f.line) for f in findings]


def test_date_rule_follows_granularity() -> None:
    assert date_rule("2024")[0] == "SM302"
    assert date_rule("2024-05-01T10:00+02:00")[0] == "SM303"
    assert date_rule("2024-02-30")[0] == "SM304"
    assert date_rule("01/05/2024")[0] == "SM301"
    assert date_rule("  ")[0] == "SM111"
    assert date_rule("yesterday", "NEWS805", "NEWS805")[0] == "NEWS805"


def test_gzip_named_xml() -> None:
    assert check_compression(b"\x1f\x8b", "sitemap.xml", where="s")[0].rule == "SM008"
    assert check_compression(b"\x1f\x8b", "sitemap.xml.gz", where="s") == []
    assert check_compression(b"<?", "sitemap.xml", where="s") == []


def test_entry_findings_are_placed_on_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(
        urlset(
            "<url><loc>https://example.com/küche</loc></url>",  # an IRI: the reader's loc differs
            "<url><loc>https://example.com/a</loc></url>",
            "<url>",
            "  <loc>https://example.com/k%C3%BCche</loc>",
            "</url>",
        )
    )
    report = validate(path, now=NOW)
    assert rules(report.findings) == [("SM205", 3), ("SM215", 6)]
    assert "listed before at line 3" in report.findings[1].message


def test_resolve_places_counts_occurrences() -> None:
    data = urlset(*["<url><loc>https://example.com/a</loc></url>"] * 3).encode()
    from lxml import etree

    root = etree.fromstring(data)
    places = resolve_places(
        [("https://example.com/a", 0), ("https://example.com/a", 2)],
        root=root,
        data=data,
        kind="urlset",
    )
    # (line, ordinal): the line of the entry's <loc>, its place among the entries
    assert places == {("https://example.com/a", 0): (3, 0), ("https://example.com/a", 2): (5, 2)}


def test_time_heuristics_need_now() -> None:
    from sitemapkit.core.model import Url

    urls = [Url("https://example.com/a", lastmod="2030-01-01"), Url("https://example.com/b")]
    with_now = FileChecks("s", Context(now=NOW))
    with_now.add(urls)
    assert [p.rule for p in with_now.pending] == ["SM305"]
    without = FileChecks("s", Context())
    without.add(urls)
    assert without.pending == []
    # a date-only value is judged at its earliest instant (+14:00): tomorrow is not future
    soon = FileChecks("s", Context(now=NOW))
    soon.add([Url("https://example.com/a", lastmod="2024-06-02")])
    assert soon.pending == []


def test_duplicates_exact_normalised_and_variants() -> None:
    from sitemapkit.core.model import Url

    fc = FileChecks("s", Context())
    fc.add([Url("https://example.com/a"), Url("https://example.com/b/")])
    fc.add(
        [Url("https://example.com/%61"), Url("https://example.com/b"), Url("https://example.com/a")]
    )
    assert [(p.rule, p.loc) for p in fc.pending] == [
        ("SM215", "https://example.com/%61"),
        ("SM216", "https://example.com/b"),
        ("SM215", "https://example.com/a"),
    ]


def test_batch_and_place_are_what_the_entry_checks_read() -> None:
    import re

    from sitemapkit.core.model import Url
    from sitemapkit.core.urls import Origin
    from sitemapkit.lint.checks.state import Batch, Place

    locs = ["https://example.com/a#x", "https://example.com/b", "https://example.com/c#y#z"]
    batch = Batch([Url(u) for u in locs], locs, [0, 0, 0], "\n".join(locs))
    assert [(i, m.group()) for i, m in batch.matches(re.compile("#."))] == [(0, "#x"), (2, "#y")]
    place = Place.of(
        Context(url="https://Example.com:443/shop/sitemap.xml", allow=("cdn.example",))
    )
    assert place is not None
    assert (place.prefix, place.origin.path) == ("https://example.com/shop/", "/shop/")
    assert place.waives(Origin.of("https://cdn.example/x"))
    assert not place.waives(Origin.of("https://other.example/x"))
    assert Place.of(Context(url="ftp://example.com/s.xml")) is None
    assert Place.of(Context()) is None


def test_variants_across_hosts_and_files() -> None:
    from sitemapkit.core.model import Url

    shared = SetChecks()
    first = FileChecks("one.xml", Context(), shared)
    first.add([Url("https://www.example.com/a")])
    first.finish()
    second = FileChecks("two.xml", Context(), shared)
    second.add([Url("http://example.com/a"), Url("https://www.example.com/a")])
    second.finish()
    assert [(p.rule, p.message.split(";")[0][-7:]) for p in second.pending] == [
        ("SM216", "one.xml"),
        ("SM215", "one.xml"),
    ]


def test_cycle_between_two_indexes(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(index(sitemap("https://example.com/b.xml")))
    (tmp_path / "b.xml").write_text(index(sitemap("https://example.com/a.xml")))
    report = validate(tmp_path / "a.xml", published_at="https://example.com/a.xml", now=NOW)
    found = {(f.rule, Path(f.where or "").name) for f in report.findings}
    assert ("SM506", "b.xml") in found or ("SM506", "a.xml") in found
    assert {r for r, _ in found} == {"SM502", "SM506"}


def test_stale_index_lastmod(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml").write_text(
        index(sitemap("https://example.com/s1.xml", "2024-01-01"))
    )
    (tmp_path / "s1.xml").write_text(
        urlset("<url><loc>https://example.com/p</loc><lastmod>2024-03-05</lastmod></url>")
    )
    report = validate(
        tmp_path / "sitemap.xml", published_at="https://example.com/sitemap.xml", now=NOW
    )
    assert rules(report.findings) == [("SM508", 3)]
    assert "2024-03-05" in report.findings[0].message


def test_alternate_outside_the_set_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(
        urlset(
            "<url><loc>https://example.com/en</loc>",
            '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/en"/>',
            '<xhtml:link rel="alternate" hreflang="fr" href="https://example.fr/"/>',
            "</url>",
            ns=XHTML,
        )
    )
    report = validate(path, now=NOW)
    assert [(f.rule, f.severity, f.line) for f in report.findings] == [("HRE905", "warning", 3)]


@pytest.mark.parametrize(
    ("code", "severity"),
    [
        ("en", None),
        ("x-default", None),
        ("zh-Hant-TW", None),
        ("de-CH", None),
        ("en-UK", "error"),
        ("gb", "error"),
        ("xx", "error"),
        ("es-419", "warning"),
        ("fil", "warning"),
    ],
)
def test_hreflang_codes(code: str, severity: str | None, tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(
        urlset(
            "<url><loc>https://example.com/a</loc>",
            f'<xhtml:link rel="alternate" hreflang="{code}" href="https://example.com/a"/>',
            "</url>",
            ns=XHTML,
        )
    )
    found = [f.severity for f in validate(path, now=NOW).findings if f.rule == "HRE902"]
    assert found == ([] if severity is None else [severity])


def test_text_sitemap_checks(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text("https://example.com/a b\n\nhttps://example.com/ä\nhttps://example.com/a b\n")
    report = validate(path, published_at="https://example.com/urls.txt", now=NOW)
    assert rules(report.findings) == [
        ("SM204", 1),
        ("SM009", 2),
        ("SM205", 3),
        ("SM204", 4),
        ("SM215", 4),
    ]
    assert {f.column for f in report.findings} == {1}  # where the line's URL starts


def test_damaged_document_keeps_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(
        urlset(
            "<url><loc>https://example.com/a#x</loc></url>",
            "<url><loc>https://example.com/a&b</loc></url>",
        )
    )
    assert rules(validate(path, now=NOW).findings) == [("SM208", 3), ("SM004", 4)]


def test_rss_is_not_held_to_sitemap_rules(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    path.write_text(
        HEAD + "<rss version='2.0'><channel><title> Padded </title>"
        "<item><title> x </title><link>https://example.com/a</link></item></channel></rss>"
    )
    assert validate(path, now=NOW).findings == []


def test_gzip_child_and_corrupt_gzip(tmp_path: Path) -> None:
    body = urlset("<url><loc>https://example.com/a</loc></url>").encode()
    (tmp_path / "ok.xml.gz").write_bytes(gzip.compress(body))
    assert validate(tmp_path / "ok.xml.gz", now=NOW).findings == []
    (tmp_path / "bad.xml.gz").write_bytes(gzip.compress(body)[:40])
    assert {f.rule for f in validate(tmp_path / "bad.xml.gz", now=NOW).findings} == {"SM007"}


class _Fetcher:
    def __init__(self, pages: dict[str, tuple[int, str]]) -> None:
        self.pages = pages
        self.asked: list[str] = []

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        self.asked.append(url)
        status, body = self.pages.get(url, (404, ""))
        return Fetched(url, status, body.encode())


def test_pluggable_fetcher_for_urls() -> None:
    top = index(sitemap("https://example.com/s1.xml"), sitemap("https://example.com/s2.xml"))
    page = urlset("<url><loc>https://example.com/p</loc></url>")
    fetcher = _Fetcher(
        {"https://example.com/sitemap.xml": (200, top), "https://example.com/s1.xml": (200, page)}
    )
    report = validate("https://example.com/sitemap.xml", fetcher=fetcher, now=NOW)
    assert fetcher.asked == [
        "https://example.com/sitemap.xml",
        "https://example.com/s1.xml",
        "https://example.com/s2.xml",
    ]
    assert [(f.rule, f.where) for f in report.findings] == [("SM012", "https://example.com/s2.xml")]


def test_local_index_with_a_fetcher_fetches_children_outside_the_folder(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml").write_text(index(sitemap("https://example.com/x/s1.xml")))
    fetcher = _Fetcher({"https://example.com/x/s1.xml": (200, urlset())})
    report = validate(
        tmp_path / "sitemap.xml",
        published_at="https://example.com/sitemap.xml",
        fetcher=fetcher,
        now=NOW,
    )
    assert fetcher.asked == ["https://example.com/x/s1.xml"]
    assert [f.rule for f in report.findings] == ["SM106"]


def test_bad_arguments_raise_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        validate(tmp_path, now=dt.datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="names no rule"):
        validate(tmp_path, select=["NOPE"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3_000), min_size=1, max_size=6),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50),
)
def test_hash_index_answers_as_a_dict_would(files: list[list[int]], probes: list[int]) -> None:
    """The first file of each hash, through bitmap growth; misses stay misses."""
    from sitemapkit.lint.checks import HashIndex

    index = HashIndex()
    model: dict[int, int] = {}
    for k, hashes in enumerate(files):
        index.add(k, hashes)
        for h in hashes:
            model.setdefault(h, k)
    assert len(index) == sum(len(h) for h in files)  # what was added, repeats included
    for h in [*probes, *model]:
        assert index.get(h) == model.get(h)
        assert (h in index) == (h in model)
    assert index.isdisjoint(probes) == model.keys().isdisjoint(probes)
