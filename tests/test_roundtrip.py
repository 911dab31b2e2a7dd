"""Anything the writer writes, the reader reads back equal; read | write reproduces files."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.core.parse import parse_bytes

BASE = "https://example.com/"
_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30
).filter(lambda t: t.strip() != "")
_PATH = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=25)
_DATE = st.one_of(
    st.dates(min_value=dt.date(1, 1, 1)),
    st.datetimes(
        min_value=dt.datetime(1, 1, 2),
        max_value=dt.datetime(9999, 12, 30),
        timezones=st.just(dt.UTC),
    ),
)


@st.composite
def urls(draw: st.DrawFn) -> sk.Url:
    loc = BASE + draw(_PATH)
    images = draw(st.lists(_PATH.map(lambda p: "https://cdn.example.net/" + p), max_size=2))
    videos = draw(
        st.lists(
            st.builds(
                sk.Video,
                thumbnail_loc=st.just("https://cdn.example.net/t.jpg"),
                title=_TEXT,
                description=_TEXT,
                content_loc=st.just("https://cdn.example.net/v.mp4"),
                duration=st.none() | st.integers(1, 28_800),
                tags=st.lists(_TEXT, max_size=3).map(tuple),
                family_friendly=st.none() | st.booleans(),
                publication_date=st.none() | _DATE,
            ),
            max_size=1,
        )
    )
    news = draw(
        st.none() | st.builds(sk.News, _TEXT, st.sampled_from(["en", "de", "zh-cn"]), _DATE, _TEXT)
    )
    alts = draw(
        st.lists(
            st.builds(
                sk.Alternate,
                st.sampled_from(["en", "de-AT", "x-default"]),
                _PATH.map(lambda p: BASE + "alt/" + p),
            ),
            max_size=3,
        )
    )
    return sk.Url(
        loc,
        lastmod=draw(st.none() | _DATE),
        changefreq=draw(st.none() | st.sampled_from(sorted(sk.core.model.CHANGEFREQS))),
        priority=draw(st.none() | st.integers(0, 10).map(lambda i: i / 10)),
        images=images,
        videos=videos,
        news=news,
        alternates=alts,
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(urls(), max_size=5))
def test_dumps_then_parse_gives_the_same_objects(items: list[sk.Url]) -> None:
    records, findings, kind = parse_bytes(sk.dumps(items))
    assert kind == "urlset"
    assert [f for f in findings if f.severity == "error"] == []
    assert records == items


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(urls(), min_size=1, max_size=6, unique_by=lambda u: u.loc))
def test_writer_shards_read_back_in_order(tmp_path: Path, items: list[sk.Url]) -> None:
    out = tmp_path / "w"
    with sk.SitemapWriter(out, base_url=BASE, max_urls=2, gzip=True) as w:
        for u in items:
            w.add(u)
    got = []
    for f in w.result.files:
        if f.kind == "urlset":
            got += parse_bytes((out / f.name).read_bytes())[0]
    assert got == items


def test_read_pipe_write_reproduces_the_files(tmp_path: Path) -> None:
    exe = [sys.executable, "-m", "sitemapkit"]
    first, second = tmp_path / "a", tmp_path / "b"
    subprocess.run(
        [
            *exe,
            "write",
            "examples/catalog.jsonl",
            "-o",
            str(first),
            "--base-url",
            "https://shop.example.com/",
            "--max-urls",
            "100",
            "--gzip",
        ],
        check=True,
        capture_output=True,
    )
    jsonl = b""
    for n in range(1, 5):
        jsonl += subprocess.run(
            [*exe, "read", str(first / f"sitemap-{n}.xml.gz")], check=True, capture_output=True
        ).stdout
    subprocess.run(
        [
            *exe,
            "write",
            "-",
            "-o",
            str(second),
            "--base-url",
            "https://shop.example.com/",
            "--max-urls",
            "100",
            "--gzip",
        ],
        input=jsonl,
        check=True,
        capture_output=True,
    )
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    for n in names:
        assert (first / n).read_bytes() == (second / n).read_bytes()
