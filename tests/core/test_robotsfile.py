"""core/robotsfile: Sitemap: lines are added without disturbing anything else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemapkit.core.robotsfile import (
    MAX_ROBOTS_BYTES,
    add_sitemaps,
    check_sitemap_url,
    sitemap_lines,
)

S = "https://example.com/sitemap.xml"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"", b"Sitemap: " + S.encode() + b"\n"),
        (b"User-agent: *\nDisallow: /x\n", b"User-agent: *\nDisallow: /x\n\nSitemap: %s\n"),
        (b"User-agent: *\nDisallow: /x", b"User-agent: *\nDisallow: /x\n\nSitemap: %s\n"),
        (b"User-agent: *\r\nDisallow:\r\n", b"User-agent: *\r\nDisallow:\r\n\r\nSitemap: %s\r\n"),
        (b"User-agent: *\rDisallow:\r", b"User-agent: *\rDisallow:\r\rSitemap: %s\r"),
        (b"User-agent: *\n\n", b"User-agent: *\n\nSitemap: %s\n"),
        (
            b"\xef\xbb\xbf# hi\nUser-agent: *\n",
            b"\xef\xbb\xbf# hi\nUser-agent: *\n\nSitemap: %s\n",
        ),
        # joins a Sitemap: block that ends the file
        (
            b"User-agent: *\n\nSitemap: https://example.com/news.xml\n",
            b"User-agent: *\n\nSitemap: https://example.com/news.xml\nSitemap: %s\n",
        ),
        (
            b"Sitemap: https://example.com/news.xml",
            b"Sitemap: https://example.com/news.xml\nSitemap: %s\n",
        ),
        # bytes that are not UTF-8 survive
        (b"# caf\xe9\nUser-agent: *\n", b"# caf\xe9\nUser-agent: *\n\nSitemap: %s\n"),
    ],
)
def test_appends_keeping_everything(before: bytes, after: bytes) -> None:
    edit = add_sitemaps(before, [S])
    assert edit.data == after.replace(b"%s", S.encode())
    assert edit.added == (S,) and edit.changed and edit.present == ()


@pytest.mark.parametrize(
    "line",
    [
        "Sitemap: https://example.com/sitemap.xml",
        "sitemap:https://example.com/sitemap.xml",
        "SITEMAP :  https://EXAMPLE.com/sitemap.xml   # the index",
        "Site-map: https://example.com/sitemap.xml",
        "Sitemap https://example.com/sitemap.xml",
        "  sitemap: https://example.com/sitemap.xml",
    ],
)
def test_existing_lines_are_found_leniently(line: str) -> None:
    data = f"User-agent: *\nDisallow: /private\n{line}\nUser-agent: b\n".encode()
    edit = add_sitemaps(data, [S])
    assert edit.data is data and not edit.changed
    assert edit.present == ((S, 3),)
    typo = "site-map" in line.lower() or "sitemap https" in line.lower()
    assert bool(edit.notes) == typo
    if typo:
        assert edit.notes[0].startswith("line 3: ") and "Google tolerates it" in edit.notes[0]


def test_other_urls_and_relative_lines_do_not_count() -> None:
    data = b"Sitemap: /sitemap.xml\nSitemap: https://example.com/sitemap.xml.gz\nDisallow: /\n"
    edit = add_sitemaps(data, [S, S])  # given twice: added once
    assert edit.added == (S,)
    assert edit.data == data + b"\nSitemap: " + S.encode() + b"\n"
    assert edit.notes == (
        "line 1: sitemap URL '/sitemap.xml' is not an absolute http(s) URL; crawlers ignore "
        "it (write the complete URL)",
    )


def test_several_urls_one_block_and_only_the_missing_ones() -> None:
    other = "https://cdn.example.net/s/host1.xml"
    edit = add_sitemaps(
        b"Sitemap: " + other.encode() + b"\r\n\r\nUser-agent: *\r\n", [other, S, S + ".gz"]
    )
    assert edit.present == ((other, 1),)
    assert edit.added == (S, S + ".gz")
    assert edit.data.endswith(
        b"User-agent: *\r\n\r\nSitemap: %s\r\nSitemap: %s.gz\r\n" % (S.encode(), S.encode())
    )


def test_a_large_file_gets_the_line_on_top() -> None:
    body = b"Disallow: /x\n" * (MAX_ROBOTS_BYTES // 13 + 1)
    data = b"\xef\xbb\xbfUser-agent: *\n" + body
    edit = add_sitemaps(data, [S])
    assert edit.data == b"\xef\xbb\xbfSitemap: " + S.encode() + b"\n\nUser-agent: *\n" + body
    assert "at the top" in edit.notes[-1]


def test_iri_is_written_as_uri() -> None:
    edit = add_sitemaps(b"", ["https://Bücher.example/karte.xml"])
    assert edit.data == b"Sitemap: https://xn--bcher-kva.example/karte.xml\n"
    # and an existing line in IRI form matches its URI
    again = add_sitemaps(
        "Sitemap: https://bücher.example/karte.xml\n".encode(),
        ["https://xn--bcher-kva.example/karte.xml"],
    )
    assert not again.changed


@pytest.mark.parametrize(
    "bad",
    [
        "/sitemap.xml",
        "sitemap.xml",
        "www.example.com/sitemap.xml",
        "ftp://example.com/s.xml",
        "https://example.com/s.xml#x",
        "",
    ],
)
def test_refuses_unfit_urls(bad: str) -> None:
    with pytest.raises(ValueError):
        check_sitemap_url(bad)
    with pytest.raises(ValueError):
        add_sitemaps(b"", [bad])


def test_sitemap_lines_positions_and_typos() -> None:
    text = (
        "\ufeffSitemap: https://a.example/1.xml\r\n"
        "User-agent: *\r"
        "Disallow: /sitemap: no\n"
        "# Sitemap: https://a.example/commented.xml\n"
        "sitemaps: https://a.example/plural.xml\n"
        "Site-Map:https://a.example/2.xml#c\n"
        "Sitemap https://a.example/3.xml\n"
    )
    got = [(s.line, s.key, s.value, s.typo, s.url) for s in sitemap_lines(text)]
    assert got == [
        (1, "Sitemap", "https://a.example/1.xml", False, "https://a.example/1.xml"),
        (6, "Site-Map", "https://a.example/2.xml", True, "https://a.example/2.xml"),
        (7, "Sitemap", "https://a.example/3.xml", True, "https://a.example/3.xml"),
    ]
    assert sitemap_lines(text.encode()) == sitemap_lines(text)


_LINES = st.lists(
    st.sampled_from(
        [
            "User-agent: *",
            "Disallow: /a",
            "",
            "# c",
            "Allow: /",
            "Sitemap: /rel",
            "sitemap: https://example.com/other.xml",
            "caf\udce9",
        ]
    ),
    max_size=8,
)


@given(_LINES, st.sampled_from(["\n", "\r\n", "\r"]), st.booleans(), st.booleans())
def test_the_original_is_a_prefix_of_the_result(
    lines: list[str], eol: str, bom: bool, final_eol: bool
) -> None:
    text = eol.join(lines) + (eol if final_eol and lines else "")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogateescape")
    edit = add_sitemaps(data, [S])
    assert edit.data.startswith(data)
    tail = edit.data[len(data) :].decode()
    if "\r" not in text and "\n" not in text:
        eol = "\n"  # nothing to copy: the default
    assert tail.endswith(f"Sitemap: {S}{eol}")
    assert set(tail[: -len(f"Sitemap: {S}{eol}")]) <= set(eol)  # only line breaks before it
    # the result lists it; a second run changes nothing
    again = add_sitemaps(edit.data, [S])
    assert not again.changed and again.data == edit.data
