"""core/probe.py: what a crawler reads from an answer (no network)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.probe import (
    HeadScanner,
    ImageSize,
    head_refused,
    is_html,
    is_noindex,
    link_canonical,
    meta_directives,
    redirect_target,
    retryable,
    robots_directives,
    robots_state,
    sniff_image,
)

from ..site import gif, jpeg, png, webp, webp_extended, webp_lossy_header

# -- X-Robots-Tag ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "noindex"),
    [
        (["noindex"], True),
        (["NoIndex, NoFollow"], True),
        (["none"], True),
        (["googlebot: noindex"], True),
        (["GoogleBot:noindex"], True),
        (["googlebot: nofollow, noindex"], True),  # the agent scopes what follows it
        (["otherbot: noindex"], False),
        (["otherbot: noindex, nofollow", "googlebot: nofollow"], False),
        (["otherbot: nofollow", "noindex"], True),  # a new header starts unscoped
        (["googlebot-news: noindex"], False),
        (["unavailable_after: 25 Jun 2010 15:00:00 PST"], False),
        (["max-snippet: 20, noindex"], True),
        (["noarchive", "nosnippet"], False),
        ([""], False),
        ([], False),
    ],
)
def test_x_robots_tag(values: list[str], noindex: bool) -> None:
    assert is_noindex(robots_directives(values, "Googlebot")) is noindex


def test_x_robots_tag_keeps_directive_names() -> None:
    values = ["max-image-preview:large, googlebot: unavailable_after: x"]
    got = robots_directives(values, "googlebot")
    assert got == {"max-image-preview", "unavailable_after"}


@given(st.lists(st.text()), st.text())
def test_x_robots_tag_never_raises(values: list[str], agent: str) -> None:
    out = robots_directives(values, agent)
    assert all(d == d.lower() for d in out)


def test_meta_directives() -> None:
    assert is_noindex(meta_directives(" NOINDEX , follow"))
    assert is_noindex(meta_directives("none"))
    assert not is_noindex(meta_directives("index, follow, max-snippet:-1"))


@given(st.text())
def test_meta_directives_never_raise(content: str) -> None:
    got = meta_directives(content)
    assert all(d and d == d.strip().lower() and not {",", ":"} & set(d) for d in got)
    # a directive added at the end is read, and none of the others is lost
    more = meta_directives(content + ", NoIndex")
    assert got | {"noindex"} == more and is_noindex(more)


# -- canonical -------------------------------------------------------------------------------


def test_link_header_canonical() -> None:
    base = "https://example.com/a/b"
    assert link_canonical(['<https://example.com/c>; rel="canonical"'], base) == (
        "https://example.com/c"
    )
    assert link_canonical(["</x>; rel=canonical"], base) == "https://example.com/x"
    assert link_canonical(['<d>; rel="alternate canonical"'], base) == "https://example.com/a/d"
    assert link_canonical(['<https://e.com/>; rel="alternate"; hreflang="de"'], base) is None
    assert link_canonical(['<x>; title="a, b"', '</y>; rel="canonical"'], base) == (
        "https://example.com/y"
    )
    assert link_canonical([], base) is None


@given(st.lists(st.text()))
def test_link_header_never_raises(values: list[str]) -> None:
    got = link_canonical(values, "https://example.com/")
    assert got is None or ("#" not in got and any("canonical" in v.lower() for v in values))
    # the first canonical link wins, whatever follows it
    first = ['</c?x=1#top>; rel="canonical"', *values]
    assert link_canonical(first, "https://example.com/") == "https://example.com/c?x=1"


# -- the head of a page --------------------------------------------------------------------

PAGE = (
    b"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>T &amp; x</title>"
    b"<script>if (a < b) { document.write('<meta name=robots content=noindex>') }</script>"
    b'<base href="https://cdn.example.com/base/">'
    b'<link rel="stylesheet" href="s.css"><LINK REL="Canonical" HREF="page?id=1&amp;x=2">'
    b'<meta name="robots" content="max-snippet:-1"><meta name="googlebot" content="noindex">'
    b'</head><body><meta name="robots" content="none"><link rel=canonical href="/wrong">'
)


def scan(data: bytes, step: int) -> HeadScanner:
    s = HeadScanner(agent="Googlebot")
    for i in range(0, len(data), step):
        if s.feed(data[i : i + step]):
            break
    return s


@pytest.mark.parametrize("step", [1, 2, 7, 64, len(PAGE)])
def test_head_scanner_any_split(step: int) -> None:
    s = scan(PAGE, step)
    assert s.done
    assert s.meta == [("robots", "max-snippet:-1"), ("googlebot", "noindex")]
    assert s.noindex() == '<meta name="googlebot" content="noindex">'
    assert s.canonical("https://example.com/p") == "https://cdn.example.com/base/page?id=1&x=2"


def test_head_scanner_other_agent_and_implicit_end() -> None:
    s = HeadScanner(agent="bingbot")
    assert s.feed(b'<title>x</title><meta name="googlebot" content="noindex"><p>text')
    assert s.noindex() is None and s.canonical("https://e.com/") is None


def test_head_scanner_stops_at_its_limit() -> None:
    s = HeadScanner(agent="Googlebot", limit=100)
    assert not s.feed(b"<head><title>" + b"x" * 50)
    assert s.feed(b"y" * 60 + b'</title><meta name="robots" content="noindex">')
    assert s.noindex() is None  # past the limit: not read


def test_head_scanner_charset() -> None:
    s = HeadScanner(agent="Googlebot", charset="iso-8859-1")
    s.feed('<link rel="canonical" href="/caf\xe9">'.encode("latin-1") + b"</head>")
    assert s.canonical("https://e.com/") == "https://e.com/café"
    assert HeadScanner(agent="x", charset="no-such-charset").feed(b"</head>")


def facts(s: HeadScanner) -> tuple[object, ...]:
    """What a scanner found, checked for shape; equal for any split of the same bytes."""
    noindex, canonical = s.noindex(), s.canonical("https://example.com/")
    assert noindex is None or (noindex.startswith('<meta name="') and noindex.endswith('">'))
    assert canonical is None or "#" not in canonical
    assert all(isinstance(n, str) and isinstance(c, str) for n, c in s.meta)
    return s.meta, noindex, canonical


@given(st.binary(max_size=2000), st.sampled_from([1, 3, 50, 4000]))
def test_head_scanner_never_raises(data: bytes, step: int) -> None:
    assert facts(scan(data, step)) == facts(scan(data, len(data) or 1))


@given(st.text(alphabet="<>!-/='\" abcdehlmnotry&;#x[]", max_size=300))
def test_head_scanner_never_raises_on_markup(text: str) -> None:
    data = text.encode()
    assert facts(scan(data, 5)) == facts(scan(data, len(data) or 1))


# -- image sizes ---------------------------------------------------------------------------

IMAGES = [
    (png, "PNG"),
    (gif, "GIF"),
    (jpeg, "JPEG"),
    (webp, "WebP"),
    (webp_extended, "WebP"),
    (webp_lossy_header, "WebP"),
]


@pytest.mark.parametrize(("make", "kind"), IMAGES)
@pytest.mark.parametrize(("width", "height"), [(1, 1), (100, 50), (2000, 1200), (16383, 9)])
def test_sniff_image(make: object, kind: str, width: int, height: int) -> None:
    data = make(width, height)  # type: ignore[operator]
    assert sniff_image(data) == ImageSize(kind, width, height)


@pytest.mark.parametrize(("make", "kind"), IMAGES)
def test_sniff_image_asks_for_more_until_the_size(make: object, kind: str) -> None:
    data = make(640, 360)  # type: ignore[operator]
    sizes = [sniff_image(data[:n]) for n in range(len(data) + 1)]
    first = next(n for n, got in enumerate(sizes) if got != "more")
    assert all(got == "more" for got in sizes[:first])
    assert all(got == ImageSize(kind, 640, 360) for got in sizes[first:])


def test_sniff_image_rejects_other_files() -> None:
    for data in (b"<html>", b"%PDF-1.7\n", b"RIFF\x00\x00\x00\x00WAVEfmt ", b"\xff\xd8\xff\xd9"):
        assert sniff_image(data + b"\x00" * 40) == "unknown"
    assert sniff_image(b"\xff\xd8\xff\xda\x00\x08" + b"\x00" * 40) == "unknown"  # scan, no frame


@given(st.binary(max_size=300))
def test_sniff_image_never_raises(data: bytes) -> None:
    got = sniff_image(data)
    assert got in ("more", "unknown") or isinstance(got, ImageSize)


SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"GIF89a": "GIF",
    b"RIFF\x00\x00\x00\x00WEBPVP8 ": "WebP",
    b"\xff\xd8": "JPEG",
}


@given(st.binary(max_size=200), st.binary(max_size=50))
def test_sniff_image_never_raises_after_a_signature(tail: bytes, more: bytes) -> None:
    for head, kind in SIGNATURES.items():
        got = sniff_image(head + tail)
        if isinstance(got, ImageSize):
            assert got.format == kind and got.width >= 0 and got.height >= 0
        else:
            assert got in ("more", "unknown")
        if got != "more":  # decided: the bytes after it change nothing
            assert sniff_image(head + tail + more) == got


# -- small decisions -----------------------------------------------------------------------


def test_decisions() -> None:
    assert [robots_state(s) for s in (200, 204, 301, 401, 404, 429, 500, None)] == [
        "parse",
        "parse",
        "allow-all",
        "allow-all",
        "allow-all",
        "unreachable",
        "unreachable",
        "unreachable",
    ]
    assert [head_refused(s) for s in (200, 206, 304, 403, 405, 429, 500, 501)] == [
        False,
        False,
        False,
        True,
        True,
        False,
        True,
        True,
    ]
    assert retryable(429) and retryable(503) and not retryable(500)
    assert redirect_target(302, "//other.example/x", "https://e.com/a") == (
        "https://other.example/x"
    )
    assert redirect_target(301, None, "https://e.com/a") is None
    assert redirect_target(304, "/x", "https://e.com/a") is None
    assert is_html("text/html; charset=utf-8") and is_html(None) and is_html("")
    assert not is_html("image/png")
