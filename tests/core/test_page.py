"""core.page: the facts of one HTML page (indexing, canonical, base, images, hreflang,
dates, links), read from bytes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.page import MAX_PAGE_BYTES, Page, read_page
from sitemapkit.core.urls import normalize

URL = "https://example.com/dir/page.html"


def page(html: str, **kw: object) -> Page:
    return read_page(html.encode(), URL, **kw)  # type: ignore[arg-type]


# -- indexing -------------------------------------------------------------------------------


def test_meta_robots_and_googlebot_noindex_or_none_forbid_indexing() -> None:
    for tag in (
        '<meta name="robots" content="noindex, follow">',
        '<META NAME="Robots" CONTENT="NOINDEX">',
        '<meta name="googlebot" content="none">',
        '<meta name="robots" content="max-snippet:20, noindex">',
    ):
        p = page(f"<html><head>{tag}</head><body>x</body></html>")
        assert not p.indexable, tag
        assert p.noindex is not None and "meta name=" in p.noindex
    assert page('<meta name="robots" content="nofollow">').indexable
    assert page('<meta name="otherbot" content="noindex">').indexable
    assert page('<meta name="robots" content="nofollow">').directives == {"nofollow"}


def test_x_robots_tag_given_by_the_caller_counts_for_every_crawler_or_google() -> None:
    assert page("<p>x</p>", x_robots_tag=["noindex"]).noindex == "X-Robots-Tag: noindex"
    assert not page("<p>x</p>", x_robots_tag=["googlebot: none"]).indexable
    assert page("<p>x</p>", x_robots_tag=["otherbot: noindex", "noarchive"]).indexable


# -- canonical and base ---------------------------------------------------------------------


def test_canonical_resolves_against_base_href_and_drops_the_fragment() -> None:
    p = page('<head><base href="/other/"><link rel="canonical" href="c.html#top"></head>')
    assert p.base == "https://example.com/other/"
    assert p.canonical == "https://example.com/other/c.html"
    assert p.canonical_elsewhere()
    assert not p.canonical_elsewhere("https://example.com/other/c.html")


def test_a_self_canonical_in_another_spelling_is_not_elsewhere() -> None:
    p = page('<link rel="canonical" href="HTTPS://EXAMPLE.COM:443/dir/./page.html">')
    assert not p.canonical_elsewhere()


def test_disagreeing_canonicals_are_ignored_as_google_ignores_them() -> None:
    p = page('<link rel="canonical" href="/a"><link rel="Canonical" href="/b">')
    assert p.canonical is None
    same = page('<link rel="canonical" href="/a"><link rel="canonical" href="/a#x">')
    assert same.canonical == "https://example.com/a"


# -- images ---------------------------------------------------------------------------------


def test_images_are_absolute_largest_candidate_without_data_uris_or_pixels() -> None:
    p = page(
        '<base href="https://cdn.example.net/img/">'
        '<img src="a.png"><img src="a.png">'
        '<img src="data:image/gif;base64,R0lGOD">'
        '<img src="/t.gif" width="1" height="1"><img src="/t2.gif" width="1px" height="0">'
        '<img src="s.jpg" srcset="s-480.jpg 480w, s-1200.jpg 1200w, s-800.jpg 800w">'
        '<img src="d.jpg" srcset="d@2x.jpg 2x, d@3x.jpg 3x">'
        '<picture><source srcset="p-1600.webp 1600w, p-800.webp 800w" type="image/webp">'
        '<source srcset="p-1000.jpg 1000w"><img src="p.jpg"></picture>'
        '<img src="https://other.example.org/x.jpg" width="640" height="1">'
    )
    assert p.images == (
        "https://cdn.example.net/img/a.png",
        "https://cdn.example.net/img/s-1200.jpg",
        "https://cdn.example.net/img/d@3x.jpg",
        "https://cdn.example.net/img/p-1600.webp",
        "https://other.example.org/x.jpg",
    )


def test_at_most_a_thousand_images_a_page() -> None:
    p = page("".join(f'<img src="/{i}.png">' for i in range(1200)))
    assert len(p.images) == 1000 and p.images[-1] == "https://example.com/999.png"


def test_image_urls_are_percent_encoded() -> None:
    assert page('<img src="/bilder/küche 1.png">').images == (
        "https://example.com/bilder/k%C3%BCche%201.png",
    )


# -- hreflang -------------------------------------------------------------------------------


def test_hreflang_alternates_with_x_default_resolved_and_once_each() -> None:
    p = page(
        '<link rel="alternate" hreflang="en" href="/en/">'
        '<link rel="alternate" hreflang="de" href="../de/">'
        '<link rel="alternate" hreflang="de" href="../de/#x">'
        '<link rel="alternate" hreflang="x-default" href="https://example.com/">'
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
    )
    assert p.alternates == (
        ("en", "https://example.com/en/"),
        ("de", "https://example.com/de/"),
        ("x-default", "https://example.com/"),
    )


# -- the page's own date --------------------------------------------------------------------


def _ld(obj: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj)}</script>'


def test_the_page_date_prefers_json_ld_then_article_then_og() -> None:
    article = '<meta property="article:modified_time" content="2024-02-01T08:00:00+01:00">'
    og = '<meta property="og:updated_time" content="2024-03-01">'
    ld = _ld({"@graph": [{"@type": "WebSite"}, {"@type": "Article", "dateModified": "2024-01-05"}]})
    assert page(ld + article + og).modified == "2024-01-05"
    assert page(article + og).modified == "2024-02-01T08:00:00+01:00"
    assert page(og).modified == "2024-03-01"
    assert page("<p>no date</p>").modified is None


def test_a_page_date_that_is_not_a_w3c_datetime_of_a_day_is_skipped() -> None:
    bad = _ld({"dateModified": "2024-05-01 10:00"}) + _ld({"dateModified": "2024"})
    og = '<meta property="og:updated_time" content="2024-02-30">'
    article = '<meta property="article:modified_time" content="2024-06-01T10:00Z">'
    assert page(bad + og + article).modified == "2024-06-01T10:00Z"
    assert page('<script type="application/ld+json">{not json</script>' + og).modified is None


# -- links ----------------------------------------------------------------------------------


def test_links_from_a_and_area_resolved_against_base_normalised_and_once_each() -> None:
    p = page(
        '<base href="https://Example.COM/base/">'
        '<a href="café/">1</a><a href="/base/caf%C3%A9/#part">2</a>'
        '<map><area href="../map.html" shape="rect"></map>'
        '<a href="mailto:a@example.com">m</a><a href="tel:+41">t</a>'
        '<a href="JavaScript:void(0)">j</a><a href="#top">f</a><a>no href</a>'
        '<a href="ftp://example.com/x">ftp</a><a href="http://[bad">bad</a>'
    )
    assert p.links == ("https://example.com/base/caf%C3%A9/", "https://example.com/map.html")


def test_links_can_be_left_out() -> None:
    assert page('<a href="/x">x</a>', links=False).links == ()


# -- bytes ----------------------------------------------------------------------------------


def test_undeclared_bytes_are_utf8_and_a_declared_charset_is_honoured() -> None:
    utf8 = read_page('<a href="/é">x</a>'.encode(), URL)
    assert utf8.links == ("https://example.com/%C3%A9",)
    latin = read_page('<meta charset="iso-8859-1"><a href="/é">x</a>'.encode("latin-1"), URL)
    assert latin.links == ("https://example.com/%C3%A9",)
    given_charset = read_page('<a href="/é">x</a>'.encode("latin-1"), URL, charset="latin-1")
    assert given_charset.links == ("https://example.com/%C3%A9",)
    header_wins = '<?xml version="1.0" encoding="utf-8"?><meta charset="iso-8859-1"><a href="/é">'
    assert read_page(header_wins.encode(), URL, charset="utf-8").links == given_charset.links


def test_only_the_first_15_mib_of_a_page_are_read() -> None:
    filler = b"<p>" + b"x" * (MAX_PAGE_BYTES - 40) + b"</p>"
    p = read_page(b'<img src="/in.png">' + filler + b'<img src="/beyond.png">', URL)
    assert p.images == ("https://example.com/in.png",)


def test_an_empty_page_has_no_facts_and_is_indexable() -> None:
    p = read_page(b"", URL)
    assert p == Page(url=URL, base=URL)


@given(st.binary(max_size=400) | st.text(max_size=200).map(str.encode))
def test_any_bytes_give_a_page_whose_urls_are_absolute_and_normalised(data: bytes) -> None:
    p = read_page(b"<a href='" + data + b"'>x</a><img src='" + data + b"'>" + data, URL)
    for link in p.links:
        assert link.startswith(("http://", "https://")) and normalize(link) == link
    for src in p.images:
        assert src.startswith(("http://", "https://"))
