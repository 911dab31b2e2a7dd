"""Tests for issue #11 §4 and the encodings: reading keeps what a consumer can use.

A value that is usable although off the specification is kept and reported as a warning
when reading, and keeps the catalogue's severity when validating (``purpose="validate"``);
what is dropped is an error. Each situation is also read whole, byte by byte and split at
every offset, with the same records and findings.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemapkit.core.finding import Finding
from sitemapkit.core.model import Alternate, Url
from sitemapkit.core.parse import Record, SitemapParser, parse_bytes
from sitemapkit.core.serialize import dumps
from sitemapkit.lint.xsd import xsd_errors

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS = (
    f'xmlns="{SM}" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    ' xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def urlset(body: str, *, encoding: str = "UTF-8") -> str:
    return f'<?xml version="1.0" encoding="{encoding}"?>\n<urlset {NS}>\n{body}\n</urlset>\n'


def news(language: str) -> str:
    return (
        "<url><loc>https://example.com/story</loc><news:news><news:publication>"
        f"<news:name>The Post</news:name><news:language>{language}</news:language>"
        "</news:publication><news:publication_date>2024-05-01</news:publication_date>"
        "<news:title>Story</news:title></news:news></url>"
    )


MOBILE = (
    '<url><loc>https://example.com/p</loc><xhtml:link rel="alternate" '
    'media="only screen and (max-width: 640px)" href="https://m.example.com/p"/></url>'
)
APP = (
    '<url><loc>https://example.com/p</loc><xhtml:link rel="alternate" '
    'href="android-app://com.example.app/https/example.com/p"/></url>'
)


def read(data: bytes, **kw: object) -> tuple[list[Record], list[Finding]]:
    records, findings, _ = parse_bytes(data, **kw)  # type: ignore[arg-type]
    return records, findings


def severities(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in findings]


def split_at(data: bytes, cuts: list[int], **kw: object) -> tuple[list[Record], list[Finding]]:
    parser = SitemapParser(**kw)  # type: ignore[arg-type]
    records: list[Record] = []
    for a, b in itertools.pairwise([0, *sorted(set(cuts)), len(data)]):
        records += parser.feed(data[a:b])
    records += parser.close()
    return records, parser.findings


def assert_any_split_reads_the_same(
    data: bytes, **kw: object
) -> tuple[list[Record], list[Finding]]:
    whole = split_at(data, [], **kw)
    assert split_at(data, list(range(1, len(data))), **kw) == whole
    for cut in range(len(data) + 1):
        assert split_at(data, [cut], **kw) == whole, cut
    return whole


# -- values kept ----------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en-US", "pt-BR", "pl_PL", "EN", "zh-Hant"])
def test_a_usable_news_language_is_kept_as_written(language: str) -> None:
    data = urlset(news(language)).encode()
    records, findings = read(data)
    assert isinstance(records[0], Url) and records[0].news is not None
    assert records[0].news.publication_language == language
    assert records[0].news.title == "Story"
    assert severities(findings) == [("NEWS804", "warning")]
    assert findings[0].element == "news:news/news:publication/news:language"
    # the validator keeps the catalogue's severity
    assert severities(read(data, purpose="validate")[1]) == [("NEWS804", "error")]
    # strict reading refuses it
    with pytest.raises(Exception, match="NEWS804"):
        read(data, strict=True)


@pytest.mark.parametrize("language", ["english", "e", "en US", "123"])
def test_an_unusable_news_language_drops_the_news_with_an_error(language: str) -> None:
    records, findings = read(urlset(news(language)).encode())
    assert isinstance(records[0], Url) and records[0].news is None
    assert severities(findings) == [("NEWS804", "error")]


def test_a_kept_language_does_not_hide_another_bad_value() -> None:
    records, findings = read(urlset(news("en-US").replace(">Story<", "> <")).encode())
    assert isinstance(records[0], Url) and records[0].news is None
    assert severities(findings) == [("NEWS807", "error")]


def test_a_mobile_url_and_an_app_link_are_kept_as_alternates() -> None:
    data = urlset(MOBILE + APP).encode()
    records, findings = assert_any_split_reads_the_same(data)
    assert [r.alternates for r in records if isinstance(r, Url)] == [
        (Alternate(None, "https://m.example.com/p", "only screen and (max-width: 640px)"),),
        (Alternate(None, "android-app://com.example.app/https/example.com/p"),),
    ]
    assert severities(findings) == [("HRE901", "warning"), ("HRE901", "warning")]
    assert "Kept as a mobile URL" in findings[0].message
    assert severities(read(data, purpose="validate")[1]) == [("HRE901", "error")] * 2


def test_an_alternate_without_href_or_rel_is_still_dropped() -> None:
    body = (
        "<url><loc>https://example.com/p</loc>"
        '<xhtml:link rel="alternate" hreflang="de"/>'
        '<xhtml:link rel="canonical" hreflang="fr" href="https://example.com/fr"/>'
        '<xhtml:link rel="alternate" media="print" href="/relative"/></url>'
    )
    records, findings = read(urlset(body).encode())
    assert isinstance(records[0], Url) and records[0].alternates == ()
    assert severities(findings) == [("HRE901", "error"), ("HRE901", "error"), ("HRE903", "error")]


def test_kept_alternates_are_written_back_valid() -> None:
    records, _ = read(urlset(MOBILE + APP).encode())
    out = dumps([r for r in records if isinstance(r, Url)])
    assert b'<xhtml:link rel="alternate" media="only screen and (max-width: 640px)"' in out
    assert b'href="android-app://com.example.app/https/example.com/p"/>' in out
    assert xsd_errors(out) == []
    again, findings = read(out)
    assert again == records
    assert [f.rule for f in findings] == ["HRE901", "HRE901"]


def test_kept_alternates_round_trip_through_the_record() -> None:
    records, _ = read(urlset(MOBILE + APP).encode())
    for r in records:
        assert isinstance(r, Url)
        rec = r.to_record()
        assert Url.from_record(rec) == r
    first = records[0].to_record()
    assert first["alternates"] == [
        {
            "hreflang": None,
            "href": "https://m.example.com/p",
            "media": "only screen and (max-width: 640px)",
        }
    ]
    # an hreflang alternate keeps its record shape
    assert Url(
        "https://example.com/", alternates=(Alternate("de", "https://example.com/de"),)
    ).to_record()["alternates"] == [{"hreflang": "de", "href": "https://example.com/de"}]


def test_an_app_link_needs_no_hreflang_and_an_http_one_is_checked() -> None:
    with pytest.raises(ValueError, match="http or https"):
        Alternate("en", "android-app://com.example/x")
    with pytest.raises(ValueError, match=r"alternate\.href"):
        Alternate(None, "android-app://com.example/with space")
    assert Alternate(None, "HTTPS://Example.com/a").href == "https://example.com/a"


# -- encodings ---------------------------------------------------------------------------


ENCODED = {
    "utf-16-le": ("UTF-16", "https://example.com/日本/\U0001f600"),  # a surrogate pair
    "utf-16-be": ("UTF-16", "https://example.com/日本/\U0001f600"),
    "latin-1": ("ISO-8859-1", "https://example.com/café"),
    "cp1252": ("windows-1252", "https://example.com/“quoted”"),
    "shift_jis": ("Shift_JIS", "https://example.com/ニュース/記事"),
}


@pytest.mark.parametrize("codec", sorted(ENCODED))
def test_a_declared_encoding_is_decoded_and_read(codec: str) -> None:
    declared, loc = ENCODED[codec]
    text = urlset(f"<url><loc>{loc}</loc></url>\n<url><loc>https://example.com/b</loc></url>")
    data = text.replace("UTF-8", declared).encode(codec)
    if codec.startswith("utf-16"):
        data = ("\ufeff".encode(codec)) + data
    records, findings = assert_any_split_reads_the_same(data)
    assert [r.loc for r in records] == [Url(loc).loc, "https://example.com/b"]
    assert severities(findings) == [("SM001", "warning")]
    assert severities(read(data, purpose="validate")[1]) == [("SM001", "error")]


def test_bytes_that_are_not_utf8_are_percent_encoded() -> None:
    data = urlset(
        "<url><loc>https://example.com/caf\udce9</loc></url>\n"
        "<url><loc>https://example.com/ok</loc></url>\n"
        "<url><loc>https://example.com/\udce9\udce8-é</loc></url>"
    ).encode("utf-8", "surrogateescape")
    records, findings = assert_any_split_reads_the_same(data)
    assert [r.loc for r in records] == [
        "https://example.com/caf%E9",
        "https://example.com/ok",
        "https://example.com/%E9%E8-%C3%A9",
    ]
    assert [(f.rule, f.severity, f.line, f.column) for f in findings] == [
        ("SM001", "error", 3, 34),
        ("SM001", "error", 5, 31),
        ("SM001", "error", 5, 32),
    ]
    assert "byte 0xE8 after 'https://example.com/%E9' was read as %E8" in findings[2].message


def test_a_document_that_ends_inside_a_character() -> None:
    data = urlset("<url><loc>https://example.com/a</loc></url>").encode() + b"\xe6\x97"
    records, findings = assert_any_split_reads_the_same(data)
    assert [r.loc for r in records] == ["https://example.com/a"]
    # each byte of the unfinished sequence is one that is not UTF-8; after the root
    assert [(f.rule, f.line) for f in findings] == [("SM001", 5), ("SM004", 5), ("SM001", 5)]


def test_a_bom_that_is_not_followed_by_markup_opens_a_utf16_text_sitemap() -> None:
    text = "\ufeff\r\n https://example.com/a\r\nhttps://example.com/\U0001f600\r\nnot a url\r\n"
    for codec in ("utf-16-le", "utf-16-be"):
        data = text.encode(codec)
        records, findings = assert_any_split_reads_the_same(data)
        assert [r.loc for r in records] == [
            "https://example.com/a",
            "https://example.com/%F0%9F%98%80",
        ]
        assert [(f.rule, f.severity, f.line) for f in findings] == [
            ("SM001", "warning", 1),
            ("SM009", "error", 4),
        ]


def test_a_utf16_text_sitemap_cut_inside_a_character() -> None:
    data = "\ufeffhttps://example.com/a\n".encode("utf-16-le") + b"h"
    records, findings = read(data)
    assert [r.loc for r in records] == ["https://example.com/a"]
    assert severities(findings) == [("SM001", "warning"), ("SM001", "error")]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["a", "é", "日", "\U0001f600", "/", "-"]),
            st.integers(0x80, 0xFF).map(lambda b: chr(0xDC00 + b)),  # a byte not UTF-8
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.integers(0, 400), max_size=6),
)
def test_any_mix_of_characters_and_bad_bytes_reads_the_same_however_split(
    parts: list[str], cuts: list[int]
) -> None:
    loc = "https://example.com/" + "".join(parts)
    raw = loc.encode("utf-8", "surrogateescape")
    data = urlset(f"<url><loc>{loc}</loc></url>").encode("utf-8", "surrogateescape")
    whole = split_at(data, [])
    assert split_at(data, [c % (len(data) + 1) for c in cuts]) == whole
    # the bytes decide: a "bad" byte may complete a sequence with its neighbour
    expected = raw.decode("utf-8", "surrogateescape")
    bad = sum(1 for c in expected if "\udc80" <= c <= "\udcff")
    expected = "".join(
        f"%{ord(c) - 0xDC00:02X}" if "\udc80" <= c <= "\udcff" else c for c in expected
    )
    assert [r.loc for r in whole[0]] == [Url(expected).loc]
    assert [f.rule for f in whole[1]] == ["SM001"] * bad


# -- text sitemaps ---------------------------------------------------------------------------


def test_relative_text_lines_are_resolved_against_the_base_url() -> None:
    data = b"/a\n/b/c?x=1\nTralala\nhttps://example.com/d\n"
    records, findings = assert_any_split_reads_the_same(data, base_url="https://example.com/s.txt")
    assert [r.loc for r in records] == [
        "https://example.com/a",
        "https://example.com/b/c?x=1",
        "https://example.com/d",
    ]
    assert [(f.rule, f.severity, f.line) for f in findings] == [
        ("SM201", "warning", 1),
        ("SM201", "warning", 2),
        ("SM009", "error", 3),
    ]
    validated = read(data, base_url="https://example.com/s.txt", purpose="validate")[1]
    assert severities(validated)[:2] == [("SM201", "error")] * 2
    records, findings = read(data)  # no base URL: dropped
    assert [r.loc for r in records] == ["https://example.com/d"]
    assert severities(findings) == [("SM201", "error"), ("SM201", "error"), ("SM009", "error")]


def test_a_text_line_that_is_not_utf8_is_kept_percent_encoded() -> None:
    records, findings = read(b"https://example.com/caf\xe9\nhttps://example.com/b\n")
    assert [r.loc for r in records] == ["https://example.com/caf%E9", "https://example.com/b"]
    assert severities(findings) == [("SM001", "warning")]


# -- read severities: an error exactly when something was lost ------------------------------


def test_findings_beyond_the_cap_are_summarised_at_their_read_severity() -> None:
    body = "\n".join(news("en-US").replace("/story", f"/{i}") for i in range(5))
    parser = SitemapParser(max_findings=2)
    records = parser.feed(urlset(body).encode()) + parser.close()
    assert all(isinstance(r, Url) and r.news is not None for r in records)
    assert severities(parser.findings) == [("NEWS804", "warning")] * 3
    assert "3 more NEWS804 findings" in parser.findings[-1].message


def test_too_many_urls_is_a_warning_when_reading() -> None:
    body = "\n".join(f"<url><loc>https://example.com/{i}</loc></url>" for i in range(50_001))
    records, findings = read(urlset(body).encode())
    assert len(records) == 50_001
    assert severities(findings) == [("SM110", "warning")]
    assert severities(read(urlset(body).encode(), purpose="validate")[1]) == [("SM110", "error")]


@pytest.mark.parametrize(
    ("extra", "rule", "severity"),
    [
        # an element no field holds: nothing is lost
        ("<foo>x</foo>", "SM107", "warning"),
        ("<news:news><news:keywords>k</news:keywords></news:news>", "NEWS808", "warning"),
        # a known extension's value out of its place: lost
        ("<news:title>x</news:title>", "SM107", "error"),
    ],
)
def test_what_is_ignored_is_an_error_only_when_it_was_a_value(
    extra: str, rule: str, severity: str
) -> None:
    body = f"<url><loc>https://example.com/</loc>{extra}</url>"
    records, findings = read(urlset(body).encode())
    assert [r.loc for r in records] == ["https://example.com/"]
    assert severities(findings)[0] == (rule, severity)


def test_a_near_miss_extension_namespace_is_read_with_a_warning() -> None:
    data = urlset(
        '<url><loc>https://example.com/</loc><xhtml:link rel="alternate" hreflang="de" '
        'href="https://example.com/de"/></url>'
    ).replace("http://www.w3.org/1999/xhtml", "https://www.w3.org/1999/xhtml")
    records, findings = read(data.encode())
    assert isinstance(records[0], Url) and records[0].alternates[0].hreflang == "de"
    assert severities(findings) == [("SM102", "warning")]
    assert severities(read(data.encode(), purpose="validate")[1]) == [("SM102", "error")]


def test_an_unknown_element_in_the_urlset_is_a_warning_a_misplaced_entry_an_error() -> None:
    body = "<foo>not a tag we know</foo><url><loc>https://example.com/a</loc></url>"
    records, findings = read(urlset(body).encode())
    assert [r.loc for r in records] == ["https://example.com/a"]
    assert severities(findings) == [("SM107", "warning")]
    index = (
        f'<sitemapindex xmlns="{SM}"><url><loc>https://example.com/a</loc></url>'
        "<sitemap><loc>https://example.com/s.xml</loc></sitemap></sitemapindex>"
    )
    records, findings = read(index.encode())
    assert [r.loc for r in records] == ["https://example.com/s.xml"]
    assert ("SM107", "error") in severities(findings)
