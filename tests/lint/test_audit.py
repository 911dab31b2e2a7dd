"""The audit's comparison (lint/audit.py) with pages built here, as a crawl would give them.

The folder cases run end to end in tests/test_audit.py and through the fixtures of
tests/data/audit (tests/lint/test_rules.py); here the verdicts only a crawl can give
(redirects, error statuses, X-Robots-Tag, depths), the drift thresholds at their edges,
and the memory the listed URLs take.
"""

from __future__ import annotations

import gzip
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.outcome import PageOutcome
from sitemapkit.lint.audit import Audit
from sitemapkit.lint.listing import Listed, read_listing

B = "https://example.com"


def _audit(*sitemaps: list[tuple[str, str | None]], start: str = B + "/") -> Audit:
    a = Audit(start=start)
    for n, entries in enumerate(sitemaps):
        a.add_sitemap(
            [
                Listed(B + loc, lastmod, f"s{n}.xml", i + 3, 8)
                for i, (loc, lastmod) in enumerate(entries)
            ]
        )
    return a


def _page(path: str, depth: int | None = 1, **kw: object) -> PageOutcome:
    loc = None if kw.get("reason") else B + path
    return PageOutcome(B + path, loc=loc, depth=depth, **kw)  # type: ignore[arg-type]


# -- AUD003: the drift thresholds at their edges --------------------------------------------


@pytest.mark.parametrize(
    ("lastmod", "own", "drifts"),
    [
        ("2024-05-02T10:00:00Z", "2024-05-01T10:00:00Z", False),  # a day later exactly
        ("2024-05-02T10:00:01Z", "2024-05-01T10:00:00Z", True),
        ("2024-05-02T12:00:00+02:00", "2024-05-01T10:00:00Z", False),  # the same, in +02:00
        ("2024-05-02T12:00:01+02:00", "2024-05-01T10:00:00Z", True),
        ("2024-05-02T05:00:00-05:00", "2024-05-01T12:00:00+02:00", False),  # both zones
        ("2024-05-02T05:00:01-05:00", "2024-05-01T12:00:00+02:00", True),
        ("2024-04-01T10:00:00Z", "2024-05-01T10:00:00Z", False),  # 30 days earlier exactly
        ("2024-04-01T09:59:59Z", "2024-05-01T10:00:00Z", True),
        ("2024-04-01T05:00:00-05:00", "2024-05-01T10:00:00Z", False),  # 10:00Z, 30 days
        ("2024-04-01T04:59:59-05:00", "2024-05-01T10:00:00Z", True),
        ("2024-05-02", "2024-05-01", False),  # days: the first instant of each, UTC
        ("2024-05-03", "2024-05-01", True),
        ("2024-04-01", "2024-05-01", False),
        ("2024-03-31", "2024-05-01", True),
        ("2024-05-01", "2024-05-01T23:00:00Z", False),  # earlier by 23 hours
    ],
)
def test_lastmod_drift_at_the_edges(lastmod: str, own: str, drifts: bool) -> None:
    a = _audit([("/", None), ("/a", lastmod)])
    found = a.add(_page("/a", modified=own))
    assert [f.rule for f in found] == (["AUD003"] if drifts else [])
    if drifts:
        (f,) = found
        assert (f.where, f.line, f.column, f.loc) == ("s0.xml", 4, 8, B + "/a")
        assert "page's own date" in f.message and repr(own) in f.message


def test_drift_names_the_exact_span_and_its_direction() -> None:
    a = _audit([("/a", "2024-05-02T10:00:01Z"), ("/b", "2024-04-01T09:59:59Z")])
    (later,) = a.add(_page("/a", modified="2024-05-01T10:00:00Z"))
    (earlier,) = a.add(_page("/b", modified="2024-05-01T10:00:00Z"))
    assert "is 1 day, 0:00:01 later than" in later.message
    assert "is 30 days, 0:00:01 earlier than" in earlier.message


def test_drift_takes_the_page_date_first_then_last_modified() -> None:
    a = _audit([("/a", "2024-05-10"), ("/b", "2024-05-10"), ("/c", None)])
    # the page's own date agrees: its Last-Modified (a deploy, say) does not count
    assert a.add(_page("/a", modified="2024-05-10", last_modified="2024-01-01T00:00:00Z")) == []
    (f,) = a.add(_page("/b", last_modified="2024-05-01T00:00:00Z"))
    assert f.rule == "AUD003" and "Last-Modified header" in f.message
    assert a.add(_page("/c", modified="2020-01-01")) == []  # no lastmod listed: no drift


# -- SM217: every reason a listed URL is not indexable --------------------------------------


@pytest.mark.parametrize(
    ("page", "words"),
    [
        (
            dict(reason="redirect", detail=B + "/new", status=301),
            "redirects to 'https://example.com/new'",
        ),
        (dict(reason="error status", status=503), "answers HTTP 503"),
        (
            dict(reason="error status", status=404, detail="Not Found"),
            "answers HTTP 404 (Not Found)",
        ),
        (
            dict(reason="noindex", detail="X-Robots-Tag: noindex", status=200),
            "noindex (X-Robots-Tag: noindex)",
        ),
        (dict(reason="noindex", detail='<meta name="robots" content="noindex">'), "says noindex"),
        (
            dict(reason="canonical elsewhere", detail=B + "/"),
            "canonical URL is 'https://example.com/'",
        ),
        (
            dict(reason="disallowed by robots.txt"),
            "robots.txt disallows it, so it is never requested",
        ),
        (dict(reason="fetch failed", detail="timed out"), "could not be fetched (timed out)"),
    ],
)
def test_sm217_gives_the_reason(page: dict[str, object], words: str) -> None:
    a = _audit([("/", None), ("/x", "2020-01-01")])
    found = a.add(_page("/x", depth=None, **page))
    assert [f.rule for f in found] == ["SM217"]
    assert found[0].message.startswith("Listed URL 'https://example.com/x' is not indexable: ")
    assert words in found[0].message
    assert (found[0].where, found[0].line, found[0].column) == ("s0.xml", 4, 8)
    assert a.finish() == []  # not indexable: not an orphan either


@pytest.mark.parametrize("reason", ["budget", "out of scope", "hidden", "excluded by --exclude"])
def test_a_page_not_judged_is_no_finding(reason: str) -> None:
    a = _audit([("/x", "2020-01-01")])
    assert a.add(_page("/x", depth=None, reason=reason)) == []
    assert a.finish() == []


def test_a_listed_document_that_is_not_html_is_indexable() -> None:
    a = _audit([("/", None), ("/a.pdf", None)])
    assert a.add(_page("/a.pdf", depth=None, reason="not HTML")) == []
    assert [f.rule for f in a.finish()] == ["AUD002"]  # but no link reaches it


# -- AUD001, AUD002: linked against listed --------------------------------------------------


def test_orphans_in_a_crawl_are_listed_pages_no_link_reaches() -> None:
    a = _audit([("/", None), ("/linked", None), ("/orphan", None), ("/late", None)])
    links = (B + "/linked", B + "/late", B + "/new")
    assert a.add(_page("/", depth=0, links=links)) == []
    assert a.add(_page("/linked", depth=1, links=(B + "/orphan-friend",))) == []
    # reached by a link, though the crawl's budget asked for it only as a listed URL
    assert a.add(_page("/late", depth=None)) == []
    # an orphan's own links reach nothing: the crawl did not follow them
    assert a.add(_page("/orphan", depth=None, links=(B + "/linked",))) == []
    (unlisted,) = a.add(_page("/new", depth=1))
    assert unlisted.rule == "AUD001" and unlisted.loc == B + "/new" and unlisted.line is None
    assert "links reach it at depth 1" in unlisted.message
    (orphan,) = a.finish()
    assert (orphan.rule, orphan.loc, orphan.line) == ("AUD002", B + "/orphan", 5)


def test_a_page_only_requested_because_it_is_listed_is_not_aud001() -> None:
    a = _audit([("/", None)])
    assert a.add(_page("/other", depth=None)) == []  # an extra URL, not found by links
    assert a.add(_page("/noindex", depth=2, reason="noindex", detail="x")) == []
    assert a.coverage.pages == 1 and a.coverage.found_only == 1 and a.coverage.indexable == 0


def test_a_self_link_does_not_reach_a_page() -> None:
    a = Audit(start=B + "/", links_reach=True)
    a.add_sitemap([Listed(B + "/", None, "s.xml", 3, 8), Listed(B + "/a", None, "s.xml", 4, 8)])
    a.add(PageOutcome(B + "/", loc=B + "/"))
    a.add(PageOutcome(B + "/a", loc=B + "/a", links=(B + "/a",)))
    assert [(f.rule, f.loc) for f in a.finish()] == [("AUD002", B + "/a")]


def test_a_page_matches_its_entry_after_normalisation() -> None:
    a = Audit(start=B + "/")
    a.add_sitemap([Listed("HTTPS://Example.com:443/a/./b", None, "s.xml", 3, 8)])
    assert a.add(PageOutcome(B + "/a/b", loc=B + "/a/b", depth=1)) == []
    assert a.coverage.both == 1 and a.coverage.listed_only == 0


# -- AUD004: a URL in several sitemaps -----------------------------------------------------


def test_aud004_names_the_first_sitemap_and_not_a_repeat_within_one() -> None:
    a = Audit()
    assert a.add_sitemap([Listed(B + "/a", None, "one.xml", 3, 8)] * 2) == []  # SM215's
    (f,) = a.add_sitemap(
        [Listed(B + "/b", None, "two.xml", 3, 8), Listed(B + "/A/../a", None, "two.xml", 4, 8)]
    )
    assert (f.rule, f.where, f.line, f.column, f.loc) == ("AUD004", "two.xml", 4, 8, B + "/A/../a")
    assert "also listed in one.xml" in f.message
    (g,) = a.add_sitemap([Listed(B + "/b", None, "three.xml", 9, 3)])
    assert "also listed in two.xml" in g.message and g.line == 9


def test_listed_and_unseen_give_each_url_once_in_listing_order() -> None:
    a = _audit([("/c", None), ("/a", None), ("/c", None)], [("/b", None), ("/a", None)])
    assert list(a.listed()) == [B + "/c", B + "/a", B + "/b"]
    a.add(_page("/a"))
    assert list(a.unseen()) == [B + "/c", B + "/b"]
    assert a.coverage.entries == 5 and a.coverage.listed == 3
    with pytest.raises(RuntimeError, match="before the pages"):
        a.add_sitemap([Listed(B + "/d", None, "late.xml")])


# -- memory --------------------------------------------------------------------------------


def test_listed_urls_are_held_without_an_object_per_url() -> None:
    """100,000 listed URLs, looked up by pages: the audit's own allocations stay a few
    hundred blocks (flat arrays), not one or more per URL, and under 120 bytes a URL
    (their text included)."""
    n = 100_000
    entries = [Listed(f"{B}/p/{i:07d}", "2024-05-01", "s.xml", i + 3, 8) for i in range(n)]
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        a = Audit(start=B + "/")
        a.add_sitemap(entries)
        a.add(_page("/p/0000007", depth=1, links=(B + "/p/0000008",)))
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    held = [s for s in after.compare_to(before, "filename") if "audit" in str(s.traceback)]
    blocks = sum(s.count_diff for s in held)
    size = sum(s.size_diff for s in held)
    assert blocks < 500, blocks
    assert size / n < 120, size / n
    assert a.coverage.listed == n


# -- the entries of a document, with positions ----------------------------------------------


def test_read_listing_places_each_entry_at_its_loc() -> None:
    doc = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<url>\n\t<loc>https://example.com/a</loc></url><url><loc>https://example.com/a</loc>"
        b"<lastmod>2024-05-01</lastmod></url>\n"
        b"  <url><lastmod>2024-05-01</lastmod>\n  <loc>https://example.com/caf\xc3\xa9</loc></url>\n"
        b"</urlset>\n"
    )
    got = read_listing(doc, "s.xml").entries
    assert [(e.loc, e.lastmod, e.line, e.column) for e in got] == [
        (B + "/a", None, 4, 2),
        (B + "/a", "2024-05-01", 4, 45),
        (B + "/caf%C3%A9", "2024-05-01", 6, 3),
    ]


def test_read_listing_of_a_document_that_cannot_be_read() -> None:
    listing = read_listing(b"<html><body>not a sitemap</body></html>", "s.xml")
    assert listing.error is not None and "HTML" in listing.error and listing.entries == []


_SPACE = st.sampled_from(["", " ", "\n", "\t", "\n  ", "\r\n"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/a", "/b", "/caf\u00e9", "/x?q=1&amp;r=2"]),
            _SPACE,
            _SPACE,
            st.booleans(),
        ),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
def test_every_entry_is_placed_at_its_own_loc(
    rows: list[tuple[str, str, str, bool]], gz: bool
) -> None:
    """However entries are spaced and repeated, each entry's line and column point at the
    "<loc>" of that entry in the text, in document order (gzip or not)."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ]
    for path, before, inside, dated in rows:
        lastmod = "<lastmod>2024-05-01</lastmod>" if dated else ""
        parts.append(f"{before}<url>{inside}{lastmod}<loc>{B}{path}</loc></url>")
    text = "".join(parts) + "\n</urlset>\n"
    data = text.encode()
    got = read_listing(gzip.compress(data) if gz else data, "s.xml").entries
    assert len(got) == len(rows)
    lines = data.decode().split("\n")
    for entry, (path, _, _, dated) in zip(got, rows, strict=True):
        assert entry.line is not None and entry.column is not None
        at = lines[entry.line - 1][entry.column - 1 :]
        assert at.startswith(f"<loc>{B}{path}</loc>")
        assert entry.lastmod == ("2024-05-01" if dated else None)
    places = [(e.line, e.column) for e in got]
    assert places == sorted(places) and len(set(places)) == len(places)  # type: ignore[type-var]
