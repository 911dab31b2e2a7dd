"""Fuzzing finds no exception (issue #16 §3): the short run of bench/fuzz.py, and each
failure a fuzz run found, minimised, as a regression case.

Every case below failed before its fix with an exception that is not sitemapkit's own (or
a traceback, or the usage exit status 2, from the command); each asserts what is said
instead. The minimised inputs of later runs live in ``tests/data/fuzz`` (``*.bin``, the
file name a run gave them in ``*.json``).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.core.parse import SitemapParser
from sitemapkit.core.parse.recovery import Repair, legal_refs
from sitemapkit.core.robots import parse_robots
from sitemapkit.core.urls import iri_to_uri
from sitemapkit.lint.checks.date import instant_bounds
from sitemapkit.reader import ReadReport
from sitemapkit.validation.fetcher import Fetched

from .conftest import DECL, SM, cli

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "data" / "fuzz"
NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
PUBLISHED = "https://www.example.com/sitemap.xml"


def _fuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_fuzz", ROOT / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class Refused:
    """The network refused: the validator says so as a finding."""

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        raise sk.FetchError(f"refused: {url!r}", where=url)


def _validate(path: Path) -> list[tuple[str, int | None, int | None]]:
    report = sk.validate(path, published_at=PUBLISHED, now=NOW, fetcher=Refused())
    return [(f.rule, f.line, f.column) for f in report.findings]


def _urlset(*rows: str, decl: str = DECL) -> bytes:
    return (
        decl + f'<urlset xmlns="{SM}">\n' + "".join(r + "\n" for r in rows) + "</urlset>\n"
    ).encode()


# -- the short run -----------------------------------------------------------------------------


def test_a_short_fuzz_run_finds_no_exception_hang_or_blowup() -> None:
    """300 inputs of one seed, every mutation among them, each in a capped child."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fuzz.py"), "--inputs", "300", "--seed", "16",
         "--jobs", "1", "--max-size", "65536", "--time-cap", "60", "--json"],
        capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    figures = json.loads(proc.stdout)
    assert figures["inputs"] == 300
    assert figures["failures"] == {}, figures["messages"]
    assert (figures["hangs"], figures["children_gone"], figures["memory_blowups"]) == ([], [], [])
    assert set(figures["mutations"]) == set(_fuzz().MUTATIONS)
    assert proc.returncode == 0


def test_an_input_is_made_again_from_its_seed_and_index() -> None:
    fuzz = _fuzz()
    seeds = fuzz.load_seeds()
    assert {s.name for s in seeds} >= {"sitemaps-org-urlset.xml", "robots-sitemap-lines.txt"}
    first = fuzz.make_input(seeds, 3, 41)
    assert fuzz.make_input(seeds, 3, 41) == first
    assert fuzz.make_input(seeds, 4, 41)[1] != first[1]


def test_the_fuzzer_names_an_exception_by_its_innermost_place_in_sitemapkit() -> None:
    with pytest.raises(UnicodeEncodeError) as info:
        iri_to_uri("https://example.com/\ud800")  # a lone surrogate has no UTF-8
    assert _fuzz().signature(info.value).startswith("UnicodeEncodeError at core/urls.py:")


# -- dates at the ends of the calendar ----------------------------------------------------------

FIRST, LAST = dt.datetime.min.replace(tzinfo=dt.UTC), dt.datetime.max.replace(tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("value", "bounds"),
    [
        ("9999-12-31", (dt.datetime(9999, 12, 30, 10, tzinfo=dt.UTC), LAST)),
        ("9999-12", (dt.datetime(9999, 11, 30, 10, tzinfo=dt.UTC), LAST)),
        ("9999", (dt.datetime(9998, 12, 31, 10, tzinfo=dt.UTC), LAST)),
        ("9999-12-31T23:59", (dt.datetime(9999, 12, 31, 9, 59, tzinfo=dt.UTC), LAST)),
        ("0001-01-01", (FIRST, dt.datetime(1, 1, 2, 12, tzinfo=dt.UTC))),
        ("2024-02", (dt.datetime(2024, 1, 31, 10, tzinfo=dt.UTC),
                     dt.datetime(2024, 3, 1, 12, tzinfo=dt.UTC))),
    ],
)  # fmt: skip
def test_the_instant_bounds_of_a_date_stop_at_the_ends_of_the_calendar(
    value: str, bounds: tuple[dt.datetime, dt.datetime]
) -> None:
    assert instant_bounds(value) == bounds


@pytest.mark.parametrize(
    ("lastmod", "rule"),
    [
        ("9999-12-31", "SM305"),
        ("9999-12-31T23:59:59-12:00", "SM305"),
        ("0001-01-01T00:00:00+14:00", "SM307"),
        ("0001-01-01", "SM307"),
    ],
)
def test_a_lastmod_at_the_end_of_the_calendar_is_a_finding_not_a_traceback(
    tmp_path: Path, lastmod: str, rule: str
) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(
        _urlset(f"<url><loc>https://www.example.com/a</loc><lastmod>{lastmod}</lastmod></url>")
    )
    assert _validate(path) == [(rule, 3, 42)]  # the <lastmod>
    code, out, err = cli(["validate", str(path)])
    assert (code, "Traceback" in err, rule in out) == (0, False, True)  # a warning


# -- declared encodings expat cannot read --------------------------------------------------------


@pytest.mark.parametrize("encoding", ["UTF-7", "Shift_JIS", "EUC-JP"])
def test_a_declared_multibyte_encoding_is_sm001_and_a_read(tmp_path: Path, encoding: str) -> None:
    """The schema errors were placed by expat, which refuses these encodings (ValueError)."""
    path = tmp_path / "sitemap.xml"
    decl = f'<?xml version="1.0" encoding="{encoding}"?>\n'
    path.write_bytes(
        _urlset("<url><loc>https://www.example.com/a</loc><priority>2</priority></url>", decl=decl)
    )
    assert [rule for rule, _, _ in _validate(path)] == ["SM001", "SM402"]
    code, out, err = cli(["validate", str(path)])
    assert (code, "Error:" in err, "SM001" in out, "SM402" in out) == (1, False, True, True)
    code, out, err = cli(["read", str(path), "--format", "urls"])
    assert (code, out, "SM001" in err) == (1, "https://www.example.com/a\n", True)


# -- lone surrogates as character references -------------------------------------------------------


def test_legal_refs_writes_a_reference_to_no_xml_character_as_u_fffd() -> None:
    data = b'<a b="&#xD800;">&#xDFFF;&#55296;&#0;&#x110000;&#x9;&#65;&#x10FFFF;</a>'
    assert legal_refs(data) == (
        b'<a b="&#xFFFD;">&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;&#x9;&#65;&#x10FFFF;</a>'
    )


def test_a_lone_surrogate_in_the_roots_xmlns_is_sm004(tmp_path: Path) -> None:
    """The 19 bytes of the issue: lxml failed to decode the recovered root's tag."""
    path = tmp_path / "sitemap.xml"
    path.write_bytes(b'<t xmlns="&#xD800;"')
    assert _validate(path) == [("SM004", 1, 19)]
    code, _, err = cli(["validate", str(path)])
    assert (code, "Error:" in err, "Traceback" in err) == (1, False, False)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-16"])
def test_a_lone_surrogate_in_the_xmlns_of_a_utf16_document_is_sm004(
    tmp_path: Path, codec: str
) -> None:
    """UTF-16 with and without a BOM: the references are rewritten in the document's own
    encoding before the recovering parser sees them (lxml failed to decode the tag)."""
    path = tmp_path / "sitemap.xml"
    text = '<?xml version="1.0" encoding="UTF-16"?><urlset xmlns="&#xD800;"><url/></urlset>'
    path.write_bytes(text.encode(codec))
    assert [rule for rule, _, _ in _validate(path)] == ["SM001", "SM004"]
    code, out, err = cli(["validate", str(path)])
    assert (code, "SM004" in out, "Traceback" in err) == (1, True, False)


def test_a_truncated_index_whose_last_loc_is_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(
        f'{DECL}<sitemapindex xmlns="{SM}">\n'
        "<sitemap><loc>https://www.example.com/a.xml</loc></sitemap>\n"
        "<sitemap><loc>&#xDFFF;</loc>".encode()
    )
    records = sk.loads(path.read_bytes(), strict=False)
    assert [r.loc for r in records] == ["https://www.example.com/a.xml"]
    found = _validate(path)
    assert ("SM004", 4, 23) in found and ("SM201", 4, 1) in found
    code, out, err = cli(["read", str(path), "--no-follow", "--format", "urls"])
    assert (code, out, "Traceback" in err) == (1, "https://www.example.com/a.xml\n", False)


def test_a_lone_surrogate_in_a_loc_is_read_as_u_fffd_percent_encoded() -> None:
    data = _urlset(
        "<url><loc>https://www.example.com/&#xD800;</loc></url>",
        "<url><loc>https://www.example.com/b</loc></url>",
    )
    parser = sk.loads(data, strict=False)
    assert [r.loc for r in parser] == [
        "https://www.example.com/%EF%BF%BD",
        "https://www.example.com/b",
    ]


# -- names no file system takes, hosts no URL has ---------------------------------------------


def test_a_child_named_longer_than_a_file_name_can_be_is_not_beside(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    child = "https://www.example.com/" + "a" * 300 + ".xml"
    path.write_bytes(
        f'{DECL}<sitemapindex xmlns="{SM}">\n<sitemap><loc>{child}</loc></sitemap>\n'
        "</sitemapindex>\n".encode()
    )
    report = ReadReport()
    assert list(sk.read(str(path), offline=True, report=report)) == []
    assert [(f.rule, "no file of its name beside" in f.message) for f in report.findings] == [
        ("SM012", True)
    ]
    validated = sk.validate(path, published_at=PUBLISHED, now=NOW, fetcher=Refused())
    assert [u for u, _ in validated.unreadable] == [child]


def test_a_sitemap_line_with_a_bracketed_host_that_is_no_ipv6_address() -> None:
    text = b"User-agent: *\nDisallow: /x\nSitemap: http://[cdata[/s.xml\n"
    found = parse_robots(text, "https://www.example.com/robots.txt", where="robots.txt")
    assert found.sitemaps == ("http://[cdata[/s.xml",)


def test_a_robots_txt_listing_a_bracketed_host_read_offline(tmp_path: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"Sitemap: http://[cdata[/s.xml\n")
    code, out, err = cli(["read", "--offline", str(path)])
    assert (code, out, "SM012" in err, "Traceback" in err) == (3, "", True, False)


# -- huge values ----------------------------------------------------------------------------------

_ALLOWED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;="
)


def _one_by_one(text: str) -> str:
    """RFC 3987 §3.1's encoding of a path without '%', a character at a time (the reference)."""
    out = []
    for ch in text:
        raw = ch.encode("utf-8")
        out.append(
            ch if raw[0] in _ALLOWED and len(raw) == 1 else "".join(f"%{b:02X}" for b in raw)
        )
    return "".join(out)


@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=40), st.integers(1, 200))
def test_the_bulk_encoding_is_the_encoding_of_each_character(text: str, times: int) -> None:
    for path in (text, text * times):  # short values, and past a loc's longest (2,048)
        path = "/" + path.replace("%", "") + "x"  # '%' is kept before two hex digits
        assert iri_to_uri("https://example.com" + path) == "https://example.com" + _one_by_one(path)


@pytest.mark.timeout(60)  # over 90 s before, at this machine's load: a Python call a character
@pytest.mark.parametrize("odd", [" ", "\u00e9", 'a "'])
def test_a_two_megabyte_loc_of_odd_characters_is_encoded_whole(tmp_path: Path, odd: str) -> None:
    """~4 us a character before (seconds a call): the same value now, in bulk."""
    loc = "https://www.example.com/" + odd * (2_000_000 // len(odd.encode())) + "x"
    path = tmp_path / "sitemap.xml"
    path.write_bytes(_urlset(f"<url><loc>{loc}</loc></url>"))
    report = ReadReport()
    assert list(sk.read_file(path, report=report)) == []
    length = 24 + len(_one_by_one(loc[24:]))  # the encoded length, said in the finding
    assert [(f.rule, f"URL is {length} characters long" in f.message) for f in report.findings] == [
        ("SM203", True)
    ]
    assert iri_to_uri(loc) == "https://www.example.com/" + _one_by_one(loc[24:])
    assert [rule for rule, _, _ in _validate(path)][:1] == ["SM203"]  # and SM204 or SM205


@pytest.mark.timeout(60)
def test_an_entry_of_nested_values_is_placed_in_linear_time(tmp_path: Path) -> None:
    """30,000 nested ``<loc>`` after damage are read as 15,000 repeated ones (SM107 each):
    each finding's element path counted its preceding siblings again, and the locator
    walked every tag of the entry for each: minutes (a hang in the fuzzer's run)."""
    news = 'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    path = tmp_path / "sitemap.xml"
    path.write_bytes(
        f'{DECL}<urlset xmlns="{SM}" {news}>\n<url><loc>https://www.example.com/a</loc>'
        f"<news:news>a & b{'<loc>' * 30_000}</news:news></url>\n</urlset>\n".encode()
    )
    report = sk.validate(path, published_at=PUBLISHED, now=NOW, fetcher=Refused(), max_findings=0)
    placed = [f for f in report.findings if f.rule == "SM107"]
    assert len(placed) == 10_000  # the reader's cap per rule
    assert [f.element for f in placed[:3]] == [
        "news:news/loc",
        "news:news/loc[2]",
        "news:news/loc[3]",
    ]
    assert {f.line for f in placed} == {3}


# -- the minimised failures of the fuzz runs ----------------------------------------------------


def _minimised() -> list[Path]:
    return sorted(FIXTURES.glob("*.bin")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize("fixture", _minimised(), ids=lambda p: p.stem)
def test_a_minimised_fuzz_failure_is_read_and_validated(tmp_path: Path, fixture: Path) -> None:
    """Each target of its input ends with records, findings or sitemapkit's own error;
    reading it says what is wrong (exit 1 or 3, a rule id on stderr)."""
    about = json.loads(fixture.with_suffix(".json").read_text())
    data = fixture.read_bytes()
    checked = _fuzz().check(about["name"], data, about["index"], folder=str(tmp_path))
    assert checked.failures == []
    path = tmp_path / about["name"]
    path.write_bytes(data)
    code, _, err = cli(["read", "--offline", str(path)])
    assert code in (1, 3) and "Traceback" not in err
    assert re.search(r": (SM|RB)\d{3} (error|warning): ", err), err


def test_a_line_of_100000_open_locs_is_validated_once_through(tmp_path: Path) -> None:
    """Input 112 of seed 7 (a ``deep`` mutation): a line of 100,000 ``<loc>`` start tags.
    Each of its many findings without a place searched the whole line again for its
    element (minutes: a hang); the line is now walked once, and the repairs past the
    first thousand are one finding, not one each at line 0, column 0."""
    tail = "".join(f"<url>\n<loc>https://www.example.com/{i}</loc>\n</url>\n" for i in range(30))
    path = tmp_path / "sitemap.xml"
    path.write_bytes(
        f'{DECL}<urlset xmlns="{SM}">\n<url>\n<lo'.encode()
        + b"<loc>" * 100_000
        + f"{tail}</urlset>\n".encode()
    )
    report = sk.validate(path, published_at=PUBLISHED, now=NOW, fetcher=Refused())
    unplaced = [f for f in report.findings if f.line is None]
    assert [
        (f.rule, "49,000 more repairs past the first 1,000" in f.message) for f in unplaced
    ] == [("SM004", True)]
    assert all(f.line and f.line >= 1 and f.column for f in report.findings if f.line is not None)
    assert {f.rule for f in report.findings} == {"SM004", "SM103", "SM107", "SM111"}


def test_a_lone_surrogate_in_an_attribute_is_read_as_u_fffd_percent_encoded() -> None:
    """Input 13465 of seed 1: ``&#xD800;`` in an ``xhtml:link`` href. The repair rewrote
    such references in text only; lxml then failed to decode the attribute."""
    data = _urlset(
        "<url><loc>https://www.example.com/a</loc>"
        '<xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/&#xD800;"/>'
        "</url>",
        "<url><loc>https://www.example.com/b</loc></url>",
    )
    records = sk.loads(
        data.replace(b"<urlset ", b'<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml" '),
        strict=False,
    )
    assert [(r.loc, [a.href for a in r.alternates]) for r in records] == [
        ("https://www.example.com/a", ["https://www.example.com/%EF%BF%BD"]),
        ("https://www.example.com/b", []),
    ]


def _bad_bytes_parse(data: bytes, pieces: int) -> tuple[list[str], list[tuple], dict[str, int]]:
    parser = SitemapParser(source="s.xml", max_findings=50)
    step = -(-len(data) // pieces)
    records = []
    for at in range(0, len(data), step):
        records += parser.feed(data[at : at + step])
    records += parser.close()
    found = [(f.rule, f.line, f.column) for f in parser.findings]
    return [r.loc for r in records], found, parser.unlisted


def test_bytes_that_are_not_utf8_past_the_cap_are_counted_the_same_whole_or_split() -> None:
    """Input 41841 of seed 1 (a corrupt gzip of a CDATA document): 316,800 bytes that are
    not UTF-8 each made a finding's message, listed or not (~13 us a byte, minutes at
    50 MiB: bench/fuzz.py's slow list). Past the cap they are now counted in one step; what
    is listed, read and counted is the same, whole or split."""
    data = (
        f'{DECL}<urlset xmlns="{SM}">\n<url><loc>https://www.example.com/a'.encode()
        + b"\xff" * 300_000
        + b"</loc></url>\n<url><loc>https://www.example.com/b</loc></url>\n</urlset>\n"
    )
    whole = _bad_bytes_parse(data, 1)
    assert whole == _bad_bytes_parse(data, 7)
    locs, found, unlisted = whole
    assert locs == ["https://www.example.com/b"]  # the other loc is too long (SM203)
    assert [r for r, _, _ in found].count("SM001") == 50 + 1  # the last one: how many more
    assert unlisted == {"SM001": 300_000 - 50}


def test_the_repair_writes_references_to_no_character_as_u_fffd_inside_sections_too() -> None:
    """Input 8381 of seed 2 (its fixture in tests/data/fuzz): a CDATA section left open by a flipped
    ``]]>`` ran over a tag whose attribute was ``&#xD800;`` a thousand times; the repair
    passed sections verbatim, libxml2's recovery read the references as characters and
    lxml failed to decode the text. Inside a section they are written as U+FFFD now, the
    same however the bytes are split (a reference cut by a chunk waits for its end)."""
    data = b"<loc><![CDATA[https://e.com/&#xD800;&#65;&#0;]]></loc><!-- &#xDFFF; -->"
    expected = b"<loc><![CDATA[https://e.com/&#xFFFD;&#65;&#xFFFD;]]></loc><!-- &#xFFFD; -->"
    whole = Repair(lambda *_: None)
    assert whole.feed(data) + whole.close() == expected
    for cut in range(1, len(data)):
        split = Repair(lambda *_: None)
        assert split.feed(data[:cut]) + split.feed(data[cut:]) + split.close() == expected, cut


def test_a_child_url_of_30000_segments_names_no_local_file_without_a_stat_each(
    tmp_path: Path,
) -> None:
    """Input 24120 of seed 2 (16.6 s in ``validate``): the local mirror of a listed URL of
    ~30,000 path segments was resolved first, an ``lstat`` a segment; a path longer than
    PATH_MAX names no file, said so at once."""
    from sitemapkit.io.target import mirror

    index = tmp_path / "sitemap.xml"
    child = "https://www.example.com/" + "a/" * 30_000 + "s.xml"
    why = mirror(index, "https://www.example.com/sitemap.xml", child)
    assert why == "no local file of that name (the path is too long)"
    near = "https://www.example.com/" + "a/" * 100 + "s.xml"  # a long one that may exist
    assert mirror(index, "https://www.example.com/sitemap.xml", near) == (
        f"no local file {tmp_path.joinpath(*['a'] * 100, 's.xml')}"
    )


def test_a_chunk_of_megabytes_is_read_in_pieces_as_if_fed_so() -> None:
    """Input 11780 of seed 3: a 101 MB document fed in three pieces of up to 41 MB raised
    the parser's resident set by 208 MiB (each stage copied the whole piece) before the
    byte budget stopped it. ``feed`` reads a big chunk a megabyte at a time: records and
    findings are those of feeding it so, whatever falls on a piece's edge."""
    rows = [f"<url><loc>https://www.example.com/küche/{i}</loc></url>" for i in range(40_000)]
    rows[24_000] = "<url><loc>https://www.example.com/a&b</loc></url>"  # a repair, ~1.8 MB in
    data = _urlset(*rows)
    assert len(data) > 2 * (1 << 20)

    def parse(step: int) -> tuple[list[str], list[tuple[str, int | None, int | None]]]:
        parser = SitemapParser(source="s.xml")
        records = [r for at in range(0, len(data), step) for r in parser.feed(data[at : at + step])]
        records += parser.close()
        return [r.loc for r in records], [(f.rule, f.line, f.column) for f in parser.findings]

    whole = parse(len(data))
    assert whole == parse(65_536) == parse(999_999)
    assert len(whole[0]) == 40_000 and whole[1][0][0] == "SM004"
