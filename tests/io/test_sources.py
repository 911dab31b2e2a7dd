"""Input sources: CSV/TXT fast path equals the row path; errors carry file, line, field."""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.core import serialize
from sitemapkit.core.lastmod import LINES, block_lastmods, in_range
from sitemapkit.core.w3cdate import format_lastmod
from sitemapkit.io.sources import write_inputs
from sitemapkit.writer import parallel as forked_path

from ..conftest import NS, parse

BASE = "https://example.com/"


def run(
    tmp: Path, name: str, text: str, *, fast_path: bool = True, **kw: object
) -> tuple[sk.WriteResult, bytes]:
    src = tmp / name
    src.write_text(text, encoding="utf-8")
    out = tmp / "out"
    with sk.SitemapWriter(out, base_url=BASE, **kw) as w:  # type: ignore[arg-type]
        write_inputs(w, [str(src)], fast_path=fast_path)
    return w.result, (out / "sitemap.xml").read_bytes()


CSV = (
    "loc,lastmod,changefreq,priority\n"
    "https://example.com/küche?a=1&b=2,2024-05-01T10:00:00Z,daily,0.5\n"
    "https://example.com/x,2024-05-01T10:00:00-00:00,weekly,1.0\n"
    "https://example.com/y,2024-02-29,never,0.0\n"
)


def test_csv_fast_path_and_row_path_give_identical_bytes(tmp_path: Path) -> None:
    _, fast = run(tmp_path, "a.csv", CSV)
    _, slow = run(tmp_path, "a.csv", CSV, fast_path=False)
    assert fast == slow
    assert b"<loc>https://example.com/k%C3%BCche?a=1&amp;b=2</loc>" in fast
    assert b"<lastmod>2024-05-01T10:00:00+00:00</lastmod>" in fast


_LASTMOD = st.one_of(
    st.sampled_from(
        [
            "",
            "2024-05-01",
            "2024-02-30",
            "2023-02-29",
            "2024-05-01T24:00:00Z",
            "2024-05-01T10:00:00+14:00",
            "2024-05-01T10:00:00+14:30",
            "2024-05-01T10:00:00-05:00",
            "2024-05-01T10:00Z",
            "2024-05-01T10:00:00.5Z",
            "0000-01-01",
            "2024-13-01",
            "2024-05-01T10:61:00Z",
            # a Z (or z) where no offset may stand
            "2024-05-01Z",
            "2024-05-01T10:00:0Z",
            "2024-05-01T10:00:00z",
            "2024-05-01TZ0:00:00+00:00",
            "2024-05-01T10:00:00ZZ",
        ]
    ),
    st.dates().map(str),
    # dates and times with every field near and past its range (fast path: one regex)
    st.builds(
        "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}".format,
        st.sampled_from([0, 1, 4, 100, 400, 1900, 2000, 2023, 2024, 2100, 9999]),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 24),
        st.integers(0, 60),
        st.integers(0, 60),
        st.one_of(
            st.just("Z"),
            st.builds(
                "{}{:02d}:{:02d}".format,
                st.sampled_from("+-"),
                st.integers(0, 15),
                st.integers(0, 60),
            ),
        ),
    ),
)
_ROW = st.tuples(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    _LASTMOD,
    st.sampled_from(["daily", "Daily", "weekly", "", "sometimes"]),
    st.sampled_from(["0.5", "1.0", "0.55", "", ".5", "2"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(_ROW, min_size=1, max_size=8))
def test_fast_path_agrees_with_row_path_on_any_rows(
    tmp_path: Path,
    rows: list[tuple[str, ...]],
) -> None:
    import csv
    import io

    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(["loc", "lastmod", "changefreq", "priority"])
    for path, lm, cf, pr in rows:
        wr.writerow([BASE + "p/" + path.replace(",", ""), lm, cf, pr])
    text = buf.getvalue().replace('"', "")  # keep the fast path eligible

    def outcome(fast_path: bool) -> bytes | str:
        try:
            return run(tmp_path, "p.csv", text, fast_path=fast_path)[1]
        except sk.SitemapError as exc:
            return f"error line {exc.line}"

    assert outcome(True) == outcome(False)


_DATETIME_FIELDS = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{:02d}:{:02d}".format,
    st.one_of(
        st.sampled_from([0, 4, 100, 400, 1900, 2000, 2023, 2024, 2100]), st.integers(0, 9999)
    ),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 60),
    st.sampled_from("+-"),
    st.integers(0, 15),
    st.sampled_from([0, 1, 30, 59, 60]),
)


@settings(max_examples=300, deadline=None)
@example(values=["2024-02-29T10:00:00+14:00"], damage=None)
@example(values=["2024-01-01T10:00:00+01:00"], damage=(4, "+"))
@example(values=["2024-01-01T10:00:00+01:00"], damage=(16, "+"))
@example(values=["2024-01-01T10:00:00-01:00"], damage=(19, "Z"))
@given(
    values=st.lists(_DATETIME_FIELDS, min_size=1, max_size=4),
    # one character replaced, in a position of a line's layout (0-25)
    damage=st.one_of(st.none(), st.tuples(st.integers(0, 103), st.sampled_from("+-:T0\nZa"))),
)
def test_column_check_of_datetimes_agrees_with_the_pattern(
    values: list[str], damage: tuple[int, str] | None
) -> None:
    lm = "".join(v + "\n" for v in values)
    if damage is not None:
        pos = damage[0] % len(lm)
        lm = lm[:pos] + damage[1] + lm[pos + 1 :]
    data = lm.encode()
    by_pattern = LINES.fullmatch(data) is not None
    by_columns = in_range(data, len(values))
    assert not by_columns or by_pattern  # never takes what the pattern refuses
    if by_pattern and all(line[20:22] != "14" for line in lm.splitlines()):
        assert by_columns  # ...and takes all the pattern takes, but for +14:00 offsets
    # the block check never takes what the one grammar refuses, and gives what it gives
    taken = block_lastmods([v.encode() for v in lm.splitlines()])
    if taken is not None:
        assert [t.decode() for t in taken] == [format_lastmod(v) for v in lm.splitlines()]


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_LASTMOD, min_size=1, max_size=4))
def test_block_lastmods_never_take_what_the_grammar_refuses(values: list[str]) -> None:
    """Whatever mix of kinds: dates, datetimes, empty fields (no lastmod, kept empty)."""
    taken = block_lastmods([v.encode() for v in values])
    if taken is not None:
        assert [t.decode() for t in taken] == [format_lastmod(v) if v else "" for v in values]


def test_fast_path_takes_plain_blocks_and_writes_what_the_row_path_writes(
    tmp_path: Path,
) -> None:
    lines = [
        f"https://example.com/p/{i}?a=1&b={i}ü,2024-02-29T23:59:59{z},daily,0.{i % 10}"
        for i, z in zip(range(300), ["Z", "+14:00", "-05:30"] * 100, strict=True)
    ]
    body = ("\n".join(lines) + "\n").encode()
    with sk.SitemapWriter(tmp_path / "o", base_url=BASE) as w:
        fast = serialize.BlockFormatter(BASE, ["loc", "lastmod", "changefreq", "priority"])
        result = fast.format(body)
        assert result is not None  # the equivalence tests above are not vacuous
        entries, count, hashes = result.data, result.entries, result.hashes
        assert count == 300 and len(hashes) == 300
        # ...and each line is what the row path makes of the same row
        for line, row in zip(entries.decode().splitlines(), lines, strict=True):
            loc, lastmod, cf, pr = row.split(",")
            url = sk.Url(w.resolve(loc), lastmod=lastmod, changefreq=cf, priority=pr)
            assert line + "\n" == serialize.url_entry(url)[0]
        # one bad value anywhere sends the whole block to the row path
        assert fast.format(body.replace(b"2024-02-29T23", b"2023-02-29T23", 1)) is None
        assert fast.format(body.replace(b"+14:00", b"+14:01", 1)) is None
        assert fast.format(body.replace(b"\n", b"\n\n", 1)) is None  # a blank line


def test_rows_without_lastmods_and_mixed_forms_take_the_fast_path(tmp_path: Path) -> None:
    """Empty fields (of a lastmod, changefreq or priority) and dates beside datetimes
    (what exports of a CMS hold) are written by the block path, byte for byte as the row
    path writes them, the index lastmods included; one value outside every form still
    sends the block to the row path."""
    forms = ["", "2024-02-29", "2024-03-01T10:00:00Z", "2024-03-01T01:00:00-11:00", ""]
    freqs, priorities = ["daily", "", "never"], ["0.5", "1.0", "", "0.0"]
    rows = [f"{BASE}p/{i},{forms[i % 5]},{freqs[i % 3]},{priorities[i % 4]}" for i in range(2_500)]
    body = ("\n".join(rows) + "\n").encode()
    fast = serialize.BlockFormatter(BASE, ["loc", "lastmod", "changefreq", "priority"])
    block = fast.format(body)
    assert block is not None and block.entries == 2_500
    assert block.data.count(b"<lastmod>") == 1_500
    assert block.data.count(b"<changefreq>") == 1_667 and block.data.count(b"<priority>") == 1_875
    assert fast.format(body.replace(b",2024-02-29,", b",2024-02-30,", 1)) is None
    assert fast.format(body.replace(b",2024-02-29,", b",2024-2-29,", 1)) is None

    # lines that end in CR LF (Windows exports, Python's csv module) are the same lines
    crlf = fast.format(body.replace(b"\n", b"\r\n"))
    assert crlf is not None and crlf.data == block.data
    assert fast.format(body.replace(b"\n", b"\r", 1)) is None  # a CR that ends no line

    def written(
        fast_path: bool, name: str, end: str = "\n", forked: bool = False
    ) -> dict[str, bytes]:
        src = tmp_path / f"{name}.csv"
        text = "loc,lastmod,changefreq,priority\n" + "".join(r + "\n" for r in rows)
        src.write_bytes(text.replace("\n", end).encode())
        out = tmp_path / name
        with sk.SitemapWriter(out, base_url=BASE, max_urls=1_000) as w:
            # forked: the shards written by two forked processes, whole ranges of lines
            write_inputs(w, [str(src)], fast_path=fast_path, parallel_min=0 if forked else 10**9)
        return {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}

    by_blocks, by_rows = written(True, "blocks"), written(False, "rows")
    assert by_blocks == by_rows and len(by_blocks) == 4  # 3 shards and the index
    assert written(True, "crlf", "\r\n") == by_rows == written(False, "crlf-rows", "\r\n")
    assert written(True, "forked", forked=True) == by_rows
    assert written(True, "crlf-forked", "\r\n", forked=True) == by_rows
    # the latest instant, in its entry's own form
    assert b"<lastmod>2024-03-01T01:00:00-11:00</lastmod>" in by_rows["sitemap.xml"]


def test_a_csv_with_every_field_quoted_takes_the_fast_path(tmp_path: Path) -> None:
    """csv.QUOTE_ALL exports (CR LF ends, as the csv module writes them) are the same rows
    unquoted: block path, forked or not, byte for byte as the row path; a field holding a
    comma, a quote or a line break sends its block to the csv module."""
    import csv as csv_module

    rows = [
        [f"{BASE}p/{i}", ["", "2024-02-29", "2024-03-01T10:00:00Z"][i % 3], "daily", "0.5"]
        for i in range(2_500)
    ]

    def quoted(rows: list[list[str]]) -> str:
        buf = io.StringIO()
        w = csv_module.writer(buf, quoting=csv_module.QUOTE_ALL)
        w.writerow(["loc", "lastmod", "changefreq", "priority"])
        w.writerows(rows)
        return buf.getvalue()

    fast = serialize.BlockFormatter(BASE, ["loc", "lastmod", "changefreq", "priority"], csv=True)
    body = quoted(rows).split("\r\n", 1)[1].encode()
    block = fast.format(body)
    plain = fast.format(body.replace(b'"', b""))
    assert block is not None and plain is not None and block.data == plain.data
    for field in (f'"{BASE}a,b"', f'"{BASE}a""b"', f'"{BASE}a\nb"', f"{BASE}unquoted"):
        assert fast.format(body.replace(f'"{BASE}p/7"'.encode(), field.encode(), 1)) is None
    # a text input's quotes are its lines' own: never taken off
    assert serialize.BlockFormatter(BASE, ["loc"]).format(b'"' + BASE.encode() + b'a"\n') is None

    def written(text: str, name: str, fast_path: bool, forked: bool = False) -> dict[str, bytes]:
        src = tmp_path / f"{name}.csv"
        src.write_bytes(text.encode())
        out = tmp_path / name
        with sk.SitemapWriter(out, base_url=BASE, max_urls=1_000) as w:
            write_inputs(w, [str(src)], fast_path=fast_path, parallel_min=0 if forked else 10**9)
        return {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}

    text = quoted(rows)
    by_rows = written(text, "rows", False)
    assert len(by_rows) == 4
    assert written(text, "blocks", True) == by_rows == written(text, "forked", True, True)
    # a title-like loc with a comma in the middle of the file: the csv module from there on
    odd = [*rows[:1_200], [f"{BASE}a,b", "", "daily", "0.5"], *rows[1_200:]]
    assert written(quoted(odd), "odd", True) == written(quoted(odd), "odd-rows", False)
    assert written(quoted(odd), "odd-forked", True, True) == written(quoted(odd), "odd-rows", False)


@pytest.mark.parametrize("base", ["https://example.com/", "https://example.com/shop/"])
def test_dot_segments_get_what_the_row_path_gives(tmp_path: Path, base: str) -> None:
    paths = ["a/./b", "a/../b", "..", "../../x", ".well-known/x", "x?next=/../y", "a/.."]
    text = "loc,priority\n" + "".join(f"{base}{p},0.5\n" for p in paths)

    def outcome(i: int, fast_path: bool) -> bytes | str:
        src = tmp_path / str(i) / "d.csv"
        src.parent.mkdir()
        src.write_text(text)
        try:
            with sk.SitemapWriter(tmp_path / f"o{i}", base_url=base) as w:
                write_inputs(w, [str(src)], fast_path=fast_path)
        except sk.SitemapError as exc:
            return f"error line {exc.line}: {exc.message}"
        return (tmp_path / f"o{i}" / "sitemap.xml").read_bytes()

    fast = outcome(1, True)
    assert fast == outcome(2, False)
    # under a folder, "../" climbs out of it: refused, whichever path wrote it
    assert isinstance(fast, str) == (base != BASE)


def test_txt_output_from_a_csv_lists_only_the_locs(tmp_path: Path) -> None:
    src = tmp_path / "a.csv"
    src.write_text(CSV, encoding="utf-8")
    with sk.SitemapWriter(tmp_path / "out", base_url=BASE, format="txt") as w:
        write_inputs(w, [str(src)])
    assert (tmp_path / "out" / "sitemap.txt").read_text() == (
        "https://example.com/k%C3%BCche?a=1&b=2\nhttps://example.com/x\nhttps://example.com/y\n"
    )


def test_csv_error_names_file_line_and_field(tmp_path: Path) -> None:
    bad = CSV + "https://example.com/z,2024-05-01,daily,1.5\n"
    with pytest.raises(sk.InputError) as info:
        run(tmp_path, "b.csv", bad)
    err = info.value
    assert (err.where, err.line, err.field) == (str(tmp_path / "b.csv"), 5, "priority")
    assert str(err).endswith(f"(at {tmp_path / 'b.csv'}:5, field priority)")
    assert not (tmp_path / "out").exists()


def test_csv_unknown_column(tmp_path: Path) -> None:
    # issue #13: an unknown column is ignored with a note, refused only with strict columns
    src = tmp_path / "c.csv"
    src.write_text("loc,title\nhttps://example.com/,x\n", encoding="utf-8")
    with (
        pytest.raises(sk.InputError, match="unknown column 'title'"),
        sk.SitemapWriter(tmp_path / "out", base_url=BASE) as w,
    ):
        write_inputs(w, [str(src)], strict_columns=True)
    assert not (tmp_path / "out").exists()


def test_csv_extension_columns_and_quoted_fields(tmp_path: Path) -> None:
    text = (
        "loc,images,alternates,news_name,news_language,news_publication_date,news_title,"
        "video_thumbnail_loc,video_title,video_description,video_content_loc,video_tags\n"
        '"https://example.com/a,b",https://example.com/1.jpg https://example.com/2.jpg,'
        'en=/a de=/de/a,Paper,en,2024-05-01,"Hello, world",/t.jpg,V,"multi\nline",'
        '/v.mp4,"x, y"\n'
    )
    _, data = run(tmp_path, "d.csv", text)
    root = parse(data)
    url = root.find("s:url", NS)
    assert url.find("s:loc", NS).text == "https://example.com/a,b"
    assert len(url.findall("image:image", NS)) == 2
    assert url.find("news:news/news:title", NS).text == "Hello, world"
    assert url.find("video:video/video:description", NS).text == "multi\nline"
    assert [t.text for t in url.findall("video:video/video:tag", NS)] == ["x", "y"]
    assert {x.get("hreflang") for x in url.findall("xhtml:link", NS)} == {"en", "de"}


def test_txt_input(tmp_path: Path) -> None:
    _, data = run(tmp_path, "u.txt", "https://example.com/a\n\n  /b  \nc\n")
    assert [e.text for e in parse(data).iterfind("s:url/s:loc", NS)] == [
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/c",
    ]


def test_jsonl_round_trips_the_record_shape(tmp_path: Path) -> None:
    u = sk.Url(
        "https://example.com/a",
        lastmod="2024-05-01",
        priority=0.3,
        images=[sk.Image("https://example.com/i.jpg")],
        news=sk.News("P", "de", "2024-05-01T10:00:00+02:00", "T"),
        alternates=[sk.Alternate("de", "https://example.com/a")],
    )
    lines = [json.dumps(u.to_record()), json.dumps({"kind": "sitemap", "loc": BASE + "s.xml"})]
    src = tmp_path / "r.jsonl"
    src.write_text("\n".join(lines) + "\n")
    with sk.SitemapWriter(tmp_path / "out", base_url=BASE) as w:
        notes = write_inputs(w, [str(src)])
    assert notes and "skipped" in notes[0]
    assert (tmp_path / "out" / "sitemap.xml").read_bytes() == sk.dumps([u])


def test_jsonl_error_position(tmp_path: Path) -> None:
    with pytest.raises(sk.InputError) as info:
        run(
            tmp_path,
            "e.jsonl",
            '{"loc": "https://example.com/"}\n{"loc": "https://example.com/", "lastmod": "May"}\n',
        )
    assert (info.value.line, info.value.field) == (2, "lastmod")


FORKED = 0  # parallel_min: take the forked path for small files too
SEQUENTIAL = 1 << 40


def _big_csv(n: int, *, bad: int | None = None, dup: int | None = None) -> str:
    rows = ["loc,lastmod,changefreq,priority"]
    for i in range(n):
        lm = "2024-02-30" if i == bad else f"2024-05-{1 + i % 28:02d}T10:00:00Z"
        loc = f"{BASE}p/k\u00fcche-{0 if i == dup else i}?a=1&b=2"
        rows.append(f"{loc},{lm},daily,0.{i % 10}")
    return "\n".join(rows) + "\n"


def _outputs(
    tmp: Path, text: str, name: str, *, parallel_min: int = FORKED, **kw: object
) -> dict[str, bytes]:
    src = tmp / name
    src.write_text(text)
    out = tmp / ("out-" + name)
    with sk.SitemapWriter(out, base_url=BASE, max_urls=1000, **kw) as w:  # type: ignore[arg-type]
        write_inputs(w, [str(src)], parallel_min=parallel_min)
    return {p.name: p.read_bytes() for p in out.iterdir()}


def _spy_forked(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record whether each forked write went through (``True``) or gave up."""
    calls: list[bool] = []
    real = forked_path.write_forked

    def spy(*a: Any, **k: Any) -> bool:
        calls.append(real(*a, **k))
        return calls[-1]

    monkeypatch.setattr(forked_path, "write_forked", spy)
    return calls


def test_forked_shard_writing_is_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _big_csv(3_500, dup=2_600)
    calls = _spy_forked(monkeypatch)
    forked = _outputs(tmp_path, text, "a.csv", gzip=True)
    assert calls == [True]
    sequential = _outputs(tmp_path, text, "b.csv", gzip=True, parallel_min=SEQUENTIAL)
    assert forked == sequential
    assert len(forked) == 5  # 4 shards (one duplicate dropped from shard 3) + index


@pytest.mark.parametrize("scan", [777, 4096])
def test_forked_shards_are_cut_right_however_the_main_process_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan: int
) -> None:
    # the ranges are found reading a buffer at a time: cuts fall inside a buffer, on its
    # last byte, several in one (1 MiB, the default, holds the whole file here)
    monkeypatch.setattr(forked_path, "_SCAN", scan)
    text = _big_csv(3_500)
    calls = _spy_forked(monkeypatch)
    forked = _outputs(tmp_path, text, "a.csv")
    assert calls == [True]
    assert forked == _outputs(tmp_path, text, "b.csv", parallel_min=SEQUENTIAL)
    assert len(forked) == 5


def test_a_dying_shard_writer_hands_the_input_to_the_sequential_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _big_csv(3_500, dup=2_600)
    real = forked_path.write_range

    def dies_on_the_second_shard(
        ctx: forked_path.Context, job: forked_path.Job
    ) -> forked_path.Outcome:
        if job.k == 1:
            os._exit(9)  # as if killed: no result, the pipe just ends
        return real(ctx, job)

    monkeypatch.setattr(forked_path, "write_range", dies_on_the_second_shard)  # inherited
    calls = _spy_forked(monkeypatch)
    forked = _outputs(tmp_path, text, "a.csv", gzip=True)
    assert calls == [False]  # it gave up...
    sequential = _outputs(tmp_path, text, "b.csv", gzip=True, parallel_min=SEQUENTIAL)
    assert forked == sequential  # ...and nothing was lost
    # no staging folder left (the manifests of the two outputs stay beside them)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and p.is_dir()]


def test_forked_error_names_the_right_line(tmp_path: Path) -> None:
    with pytest.raises(sk.InputError) as info:
        _outputs(tmp_path, _big_csv(3_500, bad=2_345), "c.csv")
    assert (info.value.line, info.value.field) == (2_345 + 2, "lastmod")
    assert not (tmp_path / "out-c.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def _error_of(tmp: Path, data: bytes, name: str, parallel_min: int) -> tuple[object, ...]:
    src = tmp / name
    src.write_bytes(data)
    out = tmp / ("out-" + name)
    with (
        pytest.raises(sk.InputError) as info,
        sk.SitemapWriter(out, base_url=BASE, max_urls=1000) as w,
    ):
        write_inputs(w, [str(src)], parallel_min=parallel_min)
    e = info.value
    return type(e), e.message, Path(e.where or "").name, e.line, e.column, e.field, e.hint


@pytest.mark.parametrize(
    "damage",
    [
        lambda rows: [*rows[:2345], rows[2345].replace(b"2024-05", b"2024-13"), *rows[2346:]],
        lambda rows: [*rows[:1500], rows[1500].replace(b",0.", b",1.5"), *rows[1501:]],
    ],
)
def test_a_forked_input_error_keeps_every_field(tmp_path: Path, damage: Any) -> None:
    head, *rows = _big_csv(3_500).encode().splitlines()
    data = b"\n".join([head, *damage(rows)]) + b"\n"
    forked = _error_of(tmp_path, data, "a.csv", FORKED)
    assert forked == _error_of(tmp_path, data, "a.csv", SEQUENTIAL)
    assert forked[2] == "a.csv" and forked[3] > 1000  # raised in a shard writer process


def test_the_forked_path_is_not_taken_while_another_thread_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _big_csv(2_500)
    calls = _spy_forked(monkeypatch)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        forked = _outputs(tmp_path, text, "t.csv")  # a fork would copy a lock it holds
    finally:
        stop.set()
        thread.join()
    assert calls == [False]
    assert forked == _outputs(tmp_path, text, "t2.csv", parallel_min=SEQUENTIAL)
    assert calls == [False]  # the sequential run did not ask


def test_forked_text_input(tmp_path: Path) -> None:
    text = "".join(f"{BASE}t/{i}\n" for i in range(2_500))
    out = _outputs(tmp_path, text, "u.txt", format="txt")
    assert out["sitemap-3.txt"].decode().splitlines()[0] == f"{BASE}t/2000"


def test_forked_path_falls_back_when_bytes_bind(tmp_path: Path) -> None:
    text = _big_csv(2_500)
    forked = _outputs(tmp_path, text, "d.csv", max_bytes=60_000)
    assert forked == _outputs(tmp_path, text, "e.csv", max_bytes=60_000, parallel_min=SEQUENTIAL)
    assert len(forked) > 4  # the byte limit, not the count, cut the shards


@pytest.mark.parametrize(
    "damage",
    [
        # a quoted loc holding a comma and a newline, deep in the second shard's range
        lambda rows: (
            [*rows[:1500], '"https://example.com/q,1\nx",2024-05-01,daily,0.5', *rows[1500:]]
        ),
        lambda rows: [*rows[:1700], "", *rows[1700:]],  # a blank line
        lambda rows: [*rows[:1000], "", *rows[1000:]],  # a blank line where a range starts
        lambda rows: [r + "\r" for r in rows],  # CRLF line ends
    ],
)
def test_forked_path_falls_back_on_input_it_cannot_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Any
) -> None:
    from sitemapkit.writer import dedupe

    head, *rows = _big_csv(2_500).splitlines()
    text = "\n".join([head, *damage(rows)]) + "\n"
    rereads: list[int] = []  # hash runs of shards dropped in the fallback would show here

    def no_pass(*a: Any) -> tuple[Any, Any, int]:
        rereads.append(1)
        return a[2], a[3], 0

    monkeypatch.setattr(dedupe, "drop_duplicates", no_pass)
    forked = _outputs(tmp_path, text, "f.csv")
    assert rereads == []
    monkeypatch.undo()
    forked = _outputs(tmp_path, text, "f2.csv")
    assert forked == _outputs(tmp_path, text, "g.csv", parallel_min=SEQUENTIAL)
    assert len(forked) == 4  # 3 shards + index: no row lost or split


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('loc\n"https://example.com/' + "a" * 200_000 + '"\n', 2),  # over csv's field limit
        ('loc\nhttps://example.com/a\n"https://example.com/b\n', 3),  # quote never closed
        ('loc\n"https://example.com/a"x\n', 2),  # text after a closing quote
    ],
)
def test_malformed_csv_is_an_input_error(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(sk.InputError, match="malformed CSV") as info:
        run(tmp_path, "m.csv", text)
    assert info.value.line == line


def test_the_writer_takes_a_whole_file_only_when_fresh_and_streaming(tmp_path: Path) -> None:
    from sitemapkit.io.sources import PlainFile

    src = tmp_path / "u.txt"
    src.write_text("".join(f"{BASE}t/{i}\n" for i in range(10)))
    fmt = serialize.BlockFormatter(BASE, ["loc"])
    plain = PlainFile(str(src), str(src), 0, fmt, lambda raw: raw)
    with sk.SitemapWriter(tmp_path / "a", base_url=BASE) as w:
        w.add(BASE + "first")
        assert not w.add_plain_file(plain)  # not fresh: the caller adds the lines itself
    with sk.SitemapWriter(tmp_path / "b", base_url=BASE, state=tmp_path / "s.db") as w:
        assert not w.add_plain_file(plain)
        block = fmt.format(src.read_bytes())
        assert block is not None
        w.add_block(block)  # with a state file too: the same entries as add() gives
    with sk.SitemapWriter(tmp_path / "c", base_url=BASE, state=tmp_path / "t.db") as w:
        for i in range(10):
            w.add(f"{BASE}t/{i}")
    assert (tmp_path / "b" / "sitemap.xml").read_bytes() == (
        tmp_path / "c" / "sitemap.xml"
    ).read_bytes()
