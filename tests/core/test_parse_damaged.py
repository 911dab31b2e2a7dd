"""Damaged XML yields what a person would see (issue #11, section 2): each recovery gives
the same records and findings however the bytes are split."""

from __future__ import annotations

import itertools
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemapkit.core.finding import Finding
from sitemapkit.core.parse import SitemapParser
from sitemapkit.core.parse.document import Record
from sitemapkit.core.parse.recovery import Repair
from sitemapkit.errors import SitemapError

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'


def _urlset(body: str) -> bytes:
    return f'{DECL}<urlset xmlns="{SM}">\n{body}\n</urlset>\n'.encode()


def _index(body: str) -> bytes:
    return f'{DECL}<sitemapindex xmlns="{SM}">\n{body}\n</sitemapindex>\n'.encode()


def _read(data: bytes, cuts: list[int], **kw: object) -> tuple[list[Record], list[Finding]]:
    parser = SitemapParser(source="s.xml", **kw)  # type: ignore[arg-type]
    records: list[Record] = []
    bounds = [0, *sorted(set(cuts)), len(data)]
    for a, b in itertools.pairwise(bounds):
        records += parser.feed(data[a:b])
    records += parser.close()
    return records, parser.findings


def _same_every_way(data: bytes, **kw: object) -> tuple[list[Record], list[Finding]]:
    """The outcome fed whole; asserted equal fed byte by byte and at random cuts."""
    whole = _read(data, [], **kw)
    assert _read(data, list(range(1, len(data))), **kw) == whole
    rnd = random.Random(len(data))
    for _ in range(5):
        assert _read(data, rnd.sample(range(1, len(data)), min(6, len(data) - 1)), **kw) == whole
    return whole


def _errors(findings: list[Finding]) -> list[tuple[str, int | None]]:
    return [(f.rule, f.line) for f in findings if f.severity == "error"]


CASES = {
    "index cut after </loc>": (
        _index("<sitemap><loc>https://e.com/1.xml</loc></sitemap>\n<sitemap>")[:-17]
        + b"<loc>https://e.com/2.xml</loc>",
        ["https://e.com/1.xml", "https://e.com/2.xml"],
        [("SM004", 4)],
    ),
    "urlset cut in a loc": (
        _urlset("<url><loc>https://e.com/a</loc></url>\n<url><loc>https://e.com/b</lo")[:-12],
        ["https://e.com/a"],
        [("SM004", 4)],
    ),
    "unclosed url": (
        _urlset(
            "<url><loc>https://e.com/a</loc><lastmod>2024-01-01</lastmod>\n"
            "<url><loc>https://e.com/b</loc></url>"
        ),
        ["https://e.com/a", "https://e.com/b"],
        [("SM004", 5)],
    ),
    "several locs in one url": (
        _urlset(
            "<url><loc>https://e.com/a</loc><lastmod>2024-01-01</lastmod>\n"
            "<loc>https://e.com/b</loc></url>"
        ),
        ["https://e.com/a", "https://e.com/b"],
        [],
    ),
    "url inside loc, CDATA": (
        _urlset("<url><loc><url><![CDATA[https://e.com/a?x=1&y=2]]></url></loc></url>"),
        ["https://e.com/a?x=1&y=2"],
        [],
    ),
    "bare text sitemap": (
        _index("<sitemap>\nhttps://e.com/s.xml?a=1&amp;b=2\n</sitemap>"),
        ["https://e.com/s.xml?a=1&b=2"],
        [],
    ),
    "xmlns reset": (
        _urlset(
            '<url xmlns=""><loc>https://e.com/a</loc></url><url><loc>https://e.com/b</loc></url>'
        ),
        ["https://e.com/a", "https://e.com/b"],
        [],
    ),
    "unescaped & in a urlset": (
        _urlset(
            "<url><loc>https://e.com/?a=1&b=2&c</loc></url><url><loc>https://e.com/z</loc></url>"
        ),
        ["https://e.com/?a=1&b=2&c", "https://e.com/z"],
        [("SM004", 3)],
    ),
    "unescaped < in an index": (
        _index("<sitemap><loc>https://e.com/s-<1>.xml</loc></sitemap>"),
        ["https://e.com/s-%3C1%3E.xml"],
        [("SM004", 3)],
    ),
    "wrong end tag": (
        _urlset("<url><loc>https://e.com/a<loc></url><url><loc>https://e.com/b</loc></url>"),
        ["https://e.com/a", "https://e.com/b"],
        [("SM004", 3)],
    ),
    "CDATA padded with Unicode space": (
        _urlset("<url><loc><![CDATA[\u3000https://e.com/a\u00a0\u2003]]></loc></url>"),
        ["https://e.com/a"],
        [],
    ),
    "declared Latin-1, then damage": (
        (
            f'<?xml version="1.0" encoding="ISO-8859-1"?>\n<urlset xmlns="{SM}">\n'
            "<url><loc>https://e.com/caf\u00e9</loc></url>\n"
            "<url><loc>https://e.com/?a&b=\u00e9</loc></url>\n</urlset>\n"
        ).encode("latin-1"),
        ["https://e.com/caf%C3%A9", "https://e.com/?a&b=%C3%A9"],
        [("SM004", 4)],  # the declared Latin-1 is decoded: SM001 is a warning when reading
    ),
    "RSS 1.0": (
        (
            b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            b'xmlns="http://purl.org/rss/1.0/"><channel rdf:about="https://e.com/feed">'
            b"<link>https://e.com/</link></channel>"
            b'<item rdf:about="https://e.com/1"><link>https://e.com/1</link></item>'
            b'<item rdf:about="https://e.com/2"/></rdf:RDF>'
        ),
        ["https://e.com/1", "https://e.com/2"],
        [],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_recovery_whatever_the_chunks(name: str) -> None:
    data, want, errors = CASES[name]
    records, findings = _same_every_way(data)
    assert [r.loc for r in records] == want
    assert _errors(findings) == errors
    # every recovery is a finding with its line
    assert findings and all(f.line is not None for f in findings if f.rule != "SM010")


def test_a_lastmod_belongs_to_the_loc_before_it() -> None:
    data = _index(
        "<sitemap><loc>https://e.com/1.xml</loc><lastmod>2004-10-01</lastmod>\n"
        "<sitemap><loc>https://e.com/2.xml</loc><lastmod>2005-01-01</lastmod></sitemap>"
    )
    records, _ = _same_every_way(data)
    assert [(r.loc, r.lastmod) for r in records] == [
        ("https://e.com/1.xml", "2004-10-01"),
        ("https://e.com/2.xml", "2005-01-01"),
    ]


def test_repairs_are_findings_with_line_and_column() -> None:
    data = _urlset(
        "<url><loc>https://e.com/?a&b</loc></url>\n<url><loc>https://e.com/?c&d</loc></url>"
    )
    records, findings = _same_every_way(data)
    assert [r.loc for r in records] == ["https://e.com/?a&b", "https://e.com/?c&d"]
    assert [(f.rule, f.severity, f.line, f.column) for f in findings] == [
        ("SM004", "error", 3, 29),
        ("SM004", "warning", 4, 27),
    ]
    assert "recovery mode" in findings[0].message
    assert "unescaped '&' was read as text" in findings[1].message


def test_strict_mode_still_stops_at_the_first_error() -> None:
    with pytest.raises(SitemapError):
        _read(_urlset("<url><loc>https://e.com/?a&b</loc></url>"), [], strict=True)


def test_repair_holds_back_only_an_unfinished_token() -> None:
    seen: list[tuple[str, int, int]] = []
    repair = Repair(lambda *a: seen.append(a))
    assert repair.feed(b"<loc>a&b") == b"<loc>a"
    assert repair.feed(b"c=1 x<") == b"&#38;bc=1 x"
    assert repair.feed(b"2</loc>") == b"&#60;2</loc>"
    assert repair.close() == b""
    assert seen == [
        ("an unescaped '&' was read as text", 1, 7),
        ("an unescaped '<' was read as text", 1, 14),
    ]


# -- fuzz: random damage to a valid sitemap ---------------------------------------------

VALID = (
    _urlset(
        "\n".join(
            f"<url><loc>https://e.com/{i}?a=1&amp;b=2</loc><lastmod>2024-01-0{i}</lastmod>"
            f"<priority>0.{i}</priority></url>"
            for i in range(1, 6)
        )
    )
    + b""
)
VALID_INDEX = _index(
    "\n".join(f"<sitemap><loc>https://e.com/{i}.xml</loc></sitemap>" for i in range(1, 4))
)
VALID_RICH = (
    DECL + f'<urlset xmlns="{SM}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
    "<url><loc><![CDATA[https://e.com/a?x=1&y=2]]></loc><image:image><image:loc>"
    "https://e.com/i.jpg</image:loc></image:image></url><!-- c -->"
    "<url><loc>https://e.com/b</loc><changefreq>daily</changefreq></url></urlset>"
).encode()
NOISE = st.sampled_from(
    [
        b"<",
        b"&",
        b">",
        b"</url>",
        b"<url>",
        b"<loc>",
        b"]]>",
        b"<![CDATA[",
        b"\x00",
        b"\xff",
        b"&eacute;",
        b"<!--",
        b'xmlns=""',
        b"\n",
        b"<sitemap>",
    ]
)


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from([VALID, VALID_INDEX, VALID_RICH])))
    for _ in range(draw(st.integers(1, 4))):
        # anywhere: the prolog and the root's start tag too (the prolog's sniffing once
        # depended on the chunks there)
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "truncate"]))
        if op == "insert":
            data[at:at] = draw(NOISE)
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 12))]
        elif op == "replace":
            data[at : at + 1] = draw(NOISE)
        else:
            del data[at:]
    return bytes(data)


@settings(
    max_examples=int(os.environ.get("DAMAGE_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(damaged(), st.lists(st.integers(1, 2_000), max_size=5))
def test_damage_never_crashes_loops_or_depends_on_chunks(data: bytes, cuts: list[int]) -> None:
    def outcome(at: list[int]) -> tuple[object, ...]:
        try:
            records, findings = _read(data, [c % (len(data) + 1) for c in at])
        except SitemapError as exc:  # the documented kinds only; anything else is a bug
            return ("error", type(exc).__name__, str(exc))
        return ("ok", records, findings)

    whole = outcome([])
    assert outcome(cuts) == whole
    if whole[0] == "ok":
        records = whole[1]
        assert isinstance(records, list)
        # bounded: never more records than locs written in the bytes
        assert len(records) <= data.count(b"<loc") + data.count(b"<sitemap") + 1


def test_an_error_libxml2_reports_only_at_the_end_loses_nothing() -> None:
    """libxml2 stops at an unescaped '&' without a word until it is closed: every byte
    after the last entry read is kept for the recovering path, however many follow."""
    n = 30_000  # past 3 MB of bytes in which the strict parser reads nothing
    data = _urlset("\n".join(f"<url><loc>https://e.com/{i}?a=1&b=2</loc></url>" for i in range(n)))
    parser = SitemapParser(source="s.xml")
    records: list[Record] = []
    for i in range(0, len(data), 65_536):
        records += parser.feed(data[i : i + 65_536])
    records += parser.close()
    assert len(records) == n
    assert records[-1].loc == f"https://e.com/{n - 1}?a=1&b=2"
    assert _errors(parser.findings)[0] == ("SM004", 3)


def test_a_damaged_declaration_is_judged_alike_however_the_bytes_are_split() -> None:
    """Found by the fuzz test: ``<?xml`` followed by markup is text before the document
    (SM003) whole; split after ``<?xml`` it was once taken for a declaration (SM004, no
    record). The prolog decides only once the declaration's name has ended."""
    data = (
        b'<?xml</url></url> version="1.0" encod>\n<urlset xmlns="'
        + SM.encode()
        + b'"><url><loc>https://e.com/a</loc></url></urlset>\n'
    )
    records, findings = _same_every_way(data)
    assert [r.loc for r in records] == ["https://e.com/a"]
    assert (findings[0].rule, findings[0].line) == ("SM003", 1)
    for cut in range(1, 40):
        assert _read(data, [cut]) == (records, findings), cut


def test_an_entity_in_the_roots_start_tag_is_judged_alike_however_the_bytes_are_split() -> None:
    """Found by the fuzz test: split right after the root's start tag, libxml2 met the
    error there only with the next piece and handed out ``<url>`` as the first start: the
    document was once refused as one of root <url> (a ParseError) instead of SM004."""
    data = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="'
        + SM.encode()
        + b'" a="caf&eacute;"><url><loc>https://e.com/a</loc></url></urlset>\n'
    )
    whole = _same_every_way(data)
    assert [f.rule for f in whole[1]] == ["SM004"]
