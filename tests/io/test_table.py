"""CSV inputs as people have them: unknown columns, url/Address for loc, ``;`` and tab
delimiters, a byte-order mark, and ``read --format csv`` output read back."""

from __future__ import annotations

from pathlib import Path

import pytest

import sitemapkit as sk
from sitemapkit.io.sources import detect_format, write_inputs

from ..conftest import NS, cli, cli_bytes, parse

BASE = "https://example.com/"


def run(
    tmp: Path, text: str | bytes, name: str = "in.csv", **kw: object
) -> tuple[list[str], list[tuple[str, str | None]]]:
    src = tmp / name
    src.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp / "out"
    with sk.SitemapWriter(out, base_url=BASE) as w:
        notes = write_inputs(w, [str(src)], **kw)  # type: ignore[arg-type]
    doc = parse(out / "sitemap.xml")
    rows = [
        (u.findtext("s:loc", namespaces=NS), u.findtext("s:lastmod", namespaces=NS))
        for u in doc.iterfind("s:url", NS)
    ]
    return notes, rows


def test_unknown_columns_are_ignored_with_one_note_naming_them(tmp_path: Path) -> None:
    notes, rows = run(
        tmp_path,
        'loc,title,lastmod,Category\n/a,Hello,2024-05-01,news\n/b,"x, y",,blog\n',
    )
    assert rows == [("https://example.com/a", "2024-05-01"), ("https://example.com/b", None)]
    assert notes == [
        f"{tmp_path / 'in.csv'}: columns ignored (not sitemap fields): 'title', 'Category'"
    ]


def test_strict_columns_refuse_an_unknown_column_and_suggest_the_near_one(tmp_path: Path) -> None:
    with pytest.raises(sk.InputError) as info:
        run(tmp_path, "loc,lastmodified\n/a,2024-05-01\n", strict_columns=True)
    err = info.value
    assert (err.message, err.line, err.field) == (
        "unknown column 'lastmodified'",
        1,
        "lastmodified",
    )
    assert err.hint is not None and err.hint.startswith("did you mean 'lastmod'?")


@pytest.mark.parametrize("name", ["url", "URL", "Address", " address "])
def test_url_and_address_columns_are_taken_for_loc(tmp_path: Path, name: str) -> None:
    notes, rows = run(tmp_path, f"{name},Status Code\nhttps://example.com/a,200\n")
    assert rows == [("https://example.com/a", None)]
    assert notes == [f"{tmp_path / 'in.csv'}: columns ignored (not sitemap fields): 'Status Code'"]


def test_loc_wins_over_url_which_is_then_an_unknown_column(tmp_path: Path) -> None:
    notes, rows = run(tmp_path, "url,loc\n/ignored,/kept\n")
    assert rows == [("https://example.com/kept", None)]
    assert notes == [f"{tmp_path / 'in.csv'}: columns ignored (not sitemap fields): 'url'"]


def test_no_loc_column_says_which_names_count(tmp_path: Path) -> None:
    with pytest.raises(sk.InputError) as info:
        run(tmp_path, "page,title\n/a,x\n")
    assert info.value.message == "the header has no 'loc' column"
    assert info.value.hint is not None and "url and Address" in info.value.hint


@pytest.mark.parametrize("sep", [";", "\t"])
def test_the_delimiter_is_sniffed(tmp_path: Path, sep: str) -> None:
    text = sep.join(["Address", "lastmod", "priority"]) + "\n"
    text += sep.join(["/a,b", "2024-05-01", "0.5"]) + "\n"
    text += sep.join(['"/c;d"', "", ""]) + "\n"
    _, rows = run(tmp_path, text)
    assert rows == [("https://example.com/a,b", "2024-05-01"), ("https://example.com/c;d", None)]


def test_a_semicolon_row_with_too_many_fields_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(sk.InputError) as info:
        run(tmp_path, "loc;lastmod\n/a;2024-05-01\n/b;x;y\n")
    assert (info.value.line, info.value.hint) == (3, "quote values that contain semicolons")


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    _, rows = run(tmp_path, b"\xef\xbb\xbfURL;Title\r\n/a;A\r\n")
    assert rows == [("https://example.com/a", None)]


def test_a_csv_without_its_extension_is_known_by_its_header() -> None:
    assert detect_format("-", b"\xef\xbb\xbfAddress;Title\n/a;x\n") == "csv"
    assert detect_format("-", b"kind,loc,lastmod\nurl,/a,\n") == "csv"
    assert detect_format("-", b"https://example.com/a;b\n") == "txt"
    assert detect_format("-", b"https://example.com/a,b\n") == "txt"


def test_read_format_csv_output_is_accepted_as_input(tmp_path: Path) -> None:
    src = tmp_path / "src"
    with sk.SitemapWriter(src, base_url=BASE) as w:
        w.add(sk.Url(BASE + "a", lastmod="2024-05-01", images=[sk.Image(BASE + "i.png")]))
        w.add_alternates({"en": BASE + "en", "de": BASE + "de"})
    code, table, _ = cli_bytes(["read", str(src / "sitemap.xml"), "--format", "csv"])
    assert code == 0
    code, _, err = cli(
        ["write", "-", "-o", str(tmp_path / "again"), "--base-url", BASE], input=table
    )
    assert code == 0, err
    assert "note" not in err  # every column of read's output is known
    assert (tmp_path / "again" / "sitemap.xml").read_bytes() == (src / "sitemap.xml").read_bytes()
