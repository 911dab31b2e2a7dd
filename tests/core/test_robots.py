"""core/robots.py: the Sitemap: records of robots.txt (spec/DISCOVERY.md §1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.robots import (
    MAX_ROBOTS_BYTES,
    parse_robots,
    robots_url,
    sitemaps_from_robots,
)

BASE = "https://example.com/robots.txt"


def rules(text: str | bytes, **kwargs: object) -> list[str]:
    return [f.rule for f in parse_robots(text, BASE, **kwargs).findings]  # type: ignore[arg-type]


def test_the_discovery_md_example_lists_three_sitemaps() -> None:
    text = (
        "Sitemap: https://www.example.com/sitemap_index.xml\n"
        "User-agent: *\n"
        "Disallow: /private/\n"
        "\n"
        "sitemap:https://www.example.com/news-sitemap.xml   # comment ok\n"
        "SITEMAP : https://cdn.example.net/sitemaps/host1.xml\n"
    )
    result = parse_robots(text, "https://www.example.com/robots.txt")
    assert result.sitemaps == (
        "https://www.example.com/sitemap_index.xml",
        "https://www.example.com/news-sitemap.xml",
        "https://cdn.example.net/sitemaps/host1.xml",
    )
    assert result.findings == ()


@pytest.mark.parametrize(
    "line",
    [
        "Sitemap: https://example.com/s.xml",
        "sitemap: https://example.com/s.xml",
        "SITEMAP: https://example.com/s.xml",
        "SiteMap:https://example.com/s.xml",
        "  Sitemap  :   https://example.com/s.xml   ",
        "\tSitemap:\thttps://example.com/s.xml\t# trailing comment",
    ],
)
def test_field_name_is_case_insensitive_with_optional_space(line: str) -> None:
    assert parse_robots(line, BASE).sitemaps == ("https://example.com/s.xml",)
    assert rules(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Site-map: https://example.com/s.xml",
        "site-map:https://example.com/s.xml",
        "Sitemaps: https://example.com/s.xml",
        "Sitemap https://example.com/s.xml",
        "sitemap\thttps://example.com/s.xml",
    ],
)
def test_google_typos_are_accepted_with_rb008(line: str) -> None:
    assert parse_robots(line, BASE).sitemaps == ("https://example.com/s.xml",)
    assert rules(line) == ["RB008"]


def test_position_in_file_and_groups_do_not_matter() -> None:
    text = (
        "Sitemap: https://example.com/1.xml\n"
        "User-agent: Googlebot\nDisallow: /x\nSitemap: https://example.com/2.xml\n"
        "User-agent: *\nAllow: /\n\nSitemap: https://example.com/3.xml"
    )
    assert sitemaps_from_robots(text, BASE) == [
        "https://example.com/1.xml",
        "https://example.com/2.xml",
        "https://example.com/3.xml",
    ]


@pytest.mark.parametrize("eol", ["\n", "\r", "\r\n"])
def test_line_endings(eol: str) -> None:
    text = eol.join(["User-agent: *", "Sitemap: https://example.com/a.xml", "Disallow:"]) + eol
    text += "Sitemap: https://example.com/b.xml"
    assert sitemaps_from_robots(text, BASE) == [
        "https://example.com/a.xml",
        "https://example.com/b.xml",
    ]


def test_bom_is_skipped_in_bytes_and_text() -> None:
    data = b"\xef\xbb\xbfSitemap: https://example.com/a.xml\r\n"
    assert sitemaps_from_robots(data, BASE) == ["https://example.com/a.xml"]
    assert sitemaps_from_robots(data.decode("utf-8"), BASE) == ["https://example.com/a.xml"]


def test_comments_are_stripped_and_commented_records_ignored() -> None:
    text = (
        "# Sitemap: https://example.com/commented.xml\n"
        "Sitemap: https://example.com/a.xml#not-part-of-it\n"
        "Sitemap: https://example.com/b.xml # fine\n"
    )
    result = parse_robots(text, BASE)
    assert result.sitemaps == ("https://example.com/a.xml", "https://example.com/b.xml")
    assert [(f.rule, f.line) for f in result.findings] == [("RB007", 2)]


def test_relative_values_are_resolved_with_a_warning() -> None:
    text = "Sitemap: /sitemap.xml\nSitemap: news.xml\nSitemap: //cdn.example.net/s.xml\n"
    result = parse_robots(text, "https://example.com/dir/robots.txt")
    assert result.sitemaps == (
        "https://example.com/sitemap.xml",
        "https://example.com/dir/news.xml",
        "https://cdn.example.net/s.xml",
    )
    assert [(f.rule, f.severity, f.line) for f in result.findings] == [
        ("RB003", "warning", 1),
        ("RB003", "warning", 2),
        ("RB003", "warning", 3),
    ]
    assert "'https://example.com/sitemap.xml'" in result.findings[0].message


def test_schemeless_empty_and_other_scheme_values_are_dropped_as_errors() -> None:
    text = "Sitemap: www.example.com/sitemap.xml\nSitemap:\nSitemap: ftp://example.com/s.xml\n"
    result = parse_robots(text, BASE)
    assert result.sitemaps == ()
    assert [(f.rule, f.severity, f.line) for f in result.findings] == [
        ("RB003", "error", 1),
        ("RB003", "error", 2),
        ("RB003", "error", 3),
    ]
    assert "https://" in result.findings[0].message
    assert result.findings[0].where == BASE


def test_relative_value_without_a_robots_url_is_dropped() -> None:
    result = parse_robots("Sitemap: /s.xml\n", None, where="robots.txt")
    assert result.sitemaps == ()
    (f,) = result.findings
    assert (f.rule, f.severity, f.where, f.line) == ("RB003", "error", "robots.txt", 1)
    assert "--published-at" in f.message


def test_iri_values_are_encoded_with_rb007() -> None:
    result = parse_robots("Sitemap: https://exämple.com/küche.xml", BASE)
    assert result.sitemaps == ("https://xn--exmple-cua.com/k%C3%BCche.xml",)
    assert rules("Sitemap: https://exämple.com/küche.xml") == ["RB007"]


def test_duplicates_are_listed_once_in_file_order() -> None:
    text = "Sitemap: https://example.com/b.xml\nSitemap: https://example.com/a.xml\n" * 3
    assert sitemaps_from_robots(text, BASE) == [
        "https://example.com/b.xml",
        "https://example.com/a.xml",
    ]


def test_other_records_and_garbage_are_ignored() -> None:
    text = "User-agent: *\nDisallow: /\nCrawl-delay: 10\nhello world again\n<html>\nSitemap"
    result = parse_robots(text, BASE)
    assert result.sitemaps == () and result.findings == ()


def test_invalid_utf8_is_rb010_and_still_read() -> None:
    data = b"# caf\xe9\nSitemap: https://example.com/a.xml\n"
    result = parse_robots(data, BASE)
    assert result.sitemaps == ("https://example.com/a.xml",)
    assert [f.rule for f in result.findings] == ["RB010"]


def test_truncated_file_is_rb009() -> None:
    assert rules("Sitemap: https://example.com/a.xml", truncated=True) == ["RB009"]
    assert MAX_ROBOTS_BYTES == 512_000


def test_disallowed_sitemap_on_same_origin_is_rb011() -> None:
    text = (
        "User-agent: *\nDisallow: /private/\n"
        "Sitemap: https://example.com/private/s.xml\n"
        "Sitemap: https://example.com/public/s.xml\n"
        "Sitemap: https://other.example/private/s.xml\n"
    )
    result = parse_robots(text, BASE)
    assert len(result.sitemaps) == 3
    assert [(f.rule, f.loc) for f in result.findings] == [
        ("RB011", "https://example.com/private/s.xml")
    ]


def test_robots_url_is_at_the_origin_root() -> None:
    assert robots_url("https://Example.com/a/b.xml?x#y") == "https://example.com/robots.txt"
    assert robots_url("http://user:pw@example.com:8080/") == "http://example.com:8080/robots.txt"
    with pytest.raises(ValueError):
        robots_url("file:///etc/passwd")


_LINES = st.lists(
    st.sampled_from(
        [
            "Sitemap: https://example.com/a.xml",
            "sitemap:https://example.com/b.xml # c",
            "User-agent: *",
            "Disallow: /x",
            "# comment",
            "",
            "Site-map: https://example.com/c.xml",
            "Sitemap: /relative.xml",
        ]
    ),
    max_size=12,
)


@given(_LINES, st.sampled_from(["\n", "\r", "\r\n"]), st.booleans())
def test_line_endings_and_bom_never_change_the_result(
    lines: list[str], eol: str, bom: bool
) -> None:
    reference = parse_robots("\n".join(lines), BASE)
    data = ("\ufeff" if bom else "") + eol.join(lines)
    again = parse_robots(data.encode("utf-8"), BASE)
    assert again.sitemaps == reference.sitemaps
    assert [(f.rule, f.line) for f in again.findings] == [
        (f.rule, f.line) for f in reference.findings
    ]


def test_the_reader_and_the_editor_split_records_alike() -> None:
    from sitemapkit.core import robotsfile

    split = robotsfile.split_record
    assert split("Sitemap https://a.example/s.xml") == ("Sitemap", "https://a.example/s.xml", True)
    assert split("SITEMAP :  https://a.example/s ") == ("SITEMAP", "https://a.example/s", False)
    assert split("Site-map /b.xml") == ("Site-map", "/b.xml", True)
    assert split("one two three") is None
    text = "Sitemap https://a.example/s.xml\nSite-map: /b.xml\nSitemaps: https://a.example/c.xml\n"
    read = parse_robots(text, "https://a.example/robots.txt").sitemaps
    edited = [s.value for s in robotsfile.sitemap_lines(text)]
    assert read[:1] == tuple(edited[:1]) == ("https://a.example/s.xml",)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-8"])
def test_byte_order_marks_decide_the_encoding(codec: str) -> None:
    text = "User-agent: *\r\nSitemap: https://example.com/s.xml\r\nSitemap: /t.xml\r\n"
    data = "\ufeff".encode(codec) + text.encode(codec)
    result = parse_robots(data, BASE)
    assert result.sitemaps == ("https://example.com/s.xml", "https://example.com/t.xml")
    assert [f.rule for f in result.findings] == ["RB003"]


def test_invalid_utf8_bytes_are_percent_encoded_as_they_are() -> None:
    data = b"Sitemap: https://example.com/caf\xe9.xml\nSitemap: https://example.com/s.xml\n"
    result = parse_robots(data, BASE)
    assert result.sitemaps == ("https://example.com/caf%E9.xml", "https://example.com/s.xml")
    assert [f.rule for f in result.findings][:1] == ["RB010"]


def test_scheme_and_host_are_normalised_and_duplicates_listed_once() -> None:
    text = (
        "Sitemap: HTTPS://WWW.Example.COM/Sitemap_Index.XML\n"
        "Sitemap: https://www.example.com/Sitemap_Index.XML\n"
        "Sitemap: /Sitemap_Index.XML\n"
        "Sitemap: https://www.example.com/sitemap_index.xml\n"
    )
    result = parse_robots(text, "https://www.example.com/robots.txt")
    # the path keeps its case: two sitemaps, the first position of each kept
    assert result.sitemaps == (
        "https://www.example.com/Sitemap_Index.XML",
        "https://www.example.com/sitemap_index.xml",
    )
    assert [f.rule for f in result.findings] == ["RB003"]  # the relative one, nothing else


@pytest.mark.parametrize(
    "text",
    [
        "Sitemap:\thttps://example.com/s.xml",
        "\tSitemap\t:\thttps://example.com/s.xml\t",
        "sitemap :https://example.com/s.xml",
        "Sitemap: https://example.com/s.xml#comment",
        "User-agent: *\rSitemap: https://example.com/s.xml\rDisallow: /",
    ],
)
def test_tabs_spaces_glued_comments_and_cr_line_ends(text: str) -> None:
    assert parse_robots(text, BASE).sitemaps == ("https://example.com/s.xml",)


def test_robots_is_known_by_its_name() -> None:
    from sitemapkit.core.robots import is_robots_name

    assert is_robots_name("robots.txt") and is_robots_name("/srv/www/Robots.TXT")
    assert is_robots_name("https://example.com/robots.txt")
    assert not is_robots_name("https://example.com/robots.txt.xml")
    assert not is_robots_name("sitemap.txt")


@pytest.mark.parametrize(
    ("head", "robots"),
    [
        (b"User-agent: *\nDisallow: /\n", True),
        (b"\xef\xbb\xbf# comment\n\nsitemap:https://e.com/s.xml\n", True),
        ("\ufeffDisallow: /x\n".encode("utf-16-le"), True),
        (b"  Crawl-delay : 10\n", True),
        (b"https://example.com/a\nhttps://example.com/b\n", False),
        (b'<?xml version="1.0"?><urlset/>', False),
        (b"", False),
        (b"# only a comment\n", False),
    ],
)
def test_robots_is_known_by_its_content(head: bytes, robots: bool) -> None:
    from sitemapkit.core.robots import looks_like_robots

    assert looks_like_robots(head) is robots


_JUNK = st.text(
    alphabet=st.characters(blacklist_characters="\r\n:#", blacklist_categories=["Cs"]),
    max_size=30,
).filter(lambda t: not t.strip().lower().startswith(("sitemap", "site-map")))


@given(st.lists(_JUNK, max_size=10), st.integers(0, 10))
def test_junk_lines_never_add_a_finding_or_a_sitemap(junk: list[str], at: int) -> None:
    lines = [*junk]
    lines.insert(min(at, len(lines)), "Sitemap: https://example.com/s.xml")
    result = parse_robots("\n".join(lines), BASE)
    assert result.sitemaps == ("https://example.com/s.xml",)
    assert result.findings == ()
