"""What ``write`` publishes passes our own ``validate``: no finding the input does not cause.

The inputs are valid records (non-ASCII paths, ``&`` in queries, lastmods in every W3C
form and offset, changefreqs, priorities, images, videos, news, hreflang clusters), cut
into several shards by a small ``max_urls``, with and without gzip and a state file.

Findings the input itself causes, and so allowed (:func:`input_caused`):

* SM306 when ≥ 95 % of ≥ 20 lastmods are one value (the input stamped them so);
* SM405 when every URL of a shard has one priority (the input gave no relative
  information): not generated (every other URL has no priority);
* SM508 (file half) when an index lists a shard none of whose entries has a lastmod
  (no date to give it: the input gave none).

News dates lie within the last day and lastmods in the past, so that NEWS806 (an old
article) and SM305 (the future) are never caused.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sitemapkit as sk
from sitemapkit.core.w3cdate import format_lastmod
from sitemapkit.validation import Tuning

BASE = "https://www.example.com/"
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)

_PATH = st.text(alphabet="abcxyzéüß日本-_.~&", min_size=1, max_size=8).filter(
    lambda p: p not in (".", "..") and not p.startswith(".")
)


@st.composite
def lastmods(draw: st.DrawFn) -> str | dt.date | dt.datetime:
    """A past lastmod in one of the W3C forms a writer accepts, any offset."""
    at = draw(st.datetimes(min_value=dt.datetime(1995, 1, 1), max_value=dt.datetime(2024, 12, 31)))
    minutes = draw(st.integers(-12 * 60, 14 * 60))
    tz = dt.timezone(dt.timedelta(minutes=minutes))
    local = at.replace(tzinfo=tz)
    form = draw(st.sampled_from(["date", "date-obj", "minutes", "seconds", "fraction", "Z", "dt"]))
    off = "Z" if form == "Z" else local.strftime("%z")
    off = off if off == "Z" else off[:3] + ":" + off[3:]
    if form == "date":
        return local.strftime("%Y-%m-%d")
    if form == "date-obj":
        return local.date()
    if form == "dt":
        return local
    stamp = local.strftime("%Y-%m-%dT%H:%M")
    if form == "minutes":
        return stamp + off
    stamp += local.strftime(":%S")
    if form == "fraction":
        return stamp + f".{local.microsecond:06d}"[:4] + off
    return stamp + off


def _page(i: int, path: str) -> str:
    return f"{BASE}{i}-{path}?a={i}&b=1"


@st.composite
def inputs(draw: st.DrawFn) -> list[sk.Url]:
    n = draw(st.integers(1, 24))
    paths = draw(st.lists(_PATH, min_size=n, max_size=n))
    locs = [_page(i, p) for i, p in enumerate(paths)]
    # hreflang clusters: consecutive pages, each listing every member (itself included)
    langs = ["en", "de", "fr-CA", "x-default"]
    clusters: dict[int, list[int]] = {}
    i = 0
    while i < n:
        size = draw(st.integers(1, 3))
        members = list(range(i, min(n, i + size)))
        if len(members) > 1 and draw(st.booleans()):
            for m in members:
                clusters[m] = members
        i += size
    urls = []
    for i, loc in enumerate(locs):
        kind = draw(st.sampled_from(["plain", "image", "video", "news"]))
        alternates = ()
        if i in clusters:
            alternates = tuple(sk.Alternate(langs[k], locs[m]) for k, m in enumerate(clusters[i]))
        urls.append(
            sk.Url(
                loc,
                lastmod=draw(st.none() | lastmods()),
                changefreq=draw(st.none() | st.sampled_from(["daily", "weekly", "never"])),
                # every other URL without one: no shard has one priority throughout (SM405)
                priority=None
                if i % 2
                else draw(
                    st.none() | st.decimals(0, 1, places=2).map(str) | st.sampled_from(["0.85"])
                ),
                alternates=alternates,
                images=(sk.Image(f"{BASE}img/{i}-é.jpg"),) if kind == "image" else (),
                videos=(
                    sk.Video(
                        thumbnail_loc=f"{BASE}thumb/{i}.jpg",
                        title=f"Video {i} & more",
                        description="A clip",
                        content_loc=f"{BASE}media/{i}.mp4",
                    ),
                )
                if kind == "video"
                else (),
                news=sk.News(
                    publication_name="The Example Times",
                    publication_language="en",
                    publication_date=(
                        NOW - dt.timedelta(minutes=draw(st.integers(0, 24 * 60)))
                    ).isoformat(),
                    title=f"Story {i} & co",
                )
                if kind == "news"
                else None,
            )
        )
    return urls


#: The time the writer's runs are given (a state run stamps it on what it saw change).
RUN1 = NOW - dt.timedelta(hours=2)
RUN2 = NOW - dt.timedelta(hours=1)

#: How the validator reads a document: whole, in pieces, the tree pass after the reader.
MODES: dict[str, Tuning | None] = {
    "whole": None,
    "pieces": Tuning(pieces_from=0, piece=2),
    "deferred": Tuning(defer_from=0, remote_from=1 << 40),
}


def input_caused(shards: list[list[Any]], indexed: bool, run: dt.datetime) -> set[str]:
    """The rule ids the input itself causes, from the records of each shard as written."""
    caused = set()
    stamp = format_lastmod(run)
    for urls in shards:
        # a priority the input gave with more than one decimal is kept, and SM403 says so
        if any(u.priority is not None and len(repr(u.priority)) > 3 for u in urls):
            caused.add("SM403")
        stamps = [u.lastmod for u in urls if u.lastmod is not None]
        if len(stamps) >= 20:
            top = max(set(stamps), key=stamps.count)
            # the input's own dates, never the run's time (that would be the writer's fault)
            if stamps.count(top) >= 0.95 * len(stamps) and top != stamp:
                caused.add("SM306")
        if indexed and not stamps:
            caused.add("SM508")
    return caused


def _write(out: Path, urls: list[sk.Url], run: dt.datetime, **kw: Any) -> sk.WriteResult:
    with sk.SitemapWriter(out, base_url=BASE, now=run, **kw) as w:
        for u in urls:
            w.add(u)
    return w.result


def _validate_clean(out: Path, result: sk.WriteResult, run: dt.datetime, mode: str) -> None:
    top = result.indexes[0] if result.indexes else result.files[0].name
    report = sk.validate(out / top, published_at=BASE + top, tuning=MODES[mode])
    got = {(f.rule, f.message) for f in report.findings}
    # the records as written (the state mode leaves some lastmods out), shard by shard
    shards = [
        [r.record for r in sk.read_file(str(out / f.name))]
        for f in result.files
        if f.kind == "urlset"
    ]
    allowed = input_caused(shards, bool(result.indexes), run)
    assert {r for r, _ in got} <= allowed, sorted(got)
    assert not report.unreadable and not report.not_checked


def _changed(urls: list[sk.Url]) -> list[sk.Url]:
    """The next run's input: every third page changed (another changefreq), the last removed."""
    out = [
        dataclasses.replace(u, changefreq="hourly") if i % 3 == 0 else u for i, u in enumerate(urls)
    ]
    # (a page of an hreflang cluster stays: its cluster would lose a member, HRE905)
    return out[:-1] if len(out) > 1 and not out[-1].alternates else out


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    urls=inputs(),
    max_urls=st.sampled_from([2, 3, 5, 7, 50]),
    gzip=st.booleans(),
    state=st.booleans(),
    mode=st.sampled_from(sorted(MODES)),
)
def test_what_write_publishes_validates_clean(
    urls: list[sk.Url], max_urls: int, gzip: bool, state: bool, mode: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        kw: dict[str, Any] = {"max_urls": max_urls, "gzip": gzip}
        if state:
            kw["state"] = Path(tmp) / "state.sqlite"
        _validate_clean(out, _write(out, urls, RUN1, **kw), RUN1, mode)
        if state:  # and the next run, which sees changes
            _validate_clean(out, _write(out, _changed(urls), RUN2, **kw), RUN2, mode)


def _index(path: Path) -> dict[str, str | None]:
    return {r.record.loc: r.record.lastmod for r in sk.read_file(str(path))}


def test_the_index_gives_each_shard_its_latest_entry_compared_as_instants(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with sk.SitemapWriter(out, base_url=BASE, max_urls=2) as w:
        # the local dates disagree with the instants: 11:00-05:00 is 16:00Z, after 10:30Z
        w.add(sk.Url(BASE + "a", lastmod="2024-05-03T00:30:00+14:00"))
        w.add(sk.Url(BASE + "b", lastmod="2024-05-02T11:00:00-05:00"))
        # a bare date counts from its day's start in UTC: 23:00-05:00 is 04:00Z, later
        w.add(sk.Url(BASE + "c", lastmod="2024-05-02"))
        w.add(sk.Url(BASE + "d", lastmod="2024-05-01T23:00:00-05:00"))
        w.add(BASE + "e")  # a shard without any lastmod: none in the index
    assert _index(out / "sitemap.xml") == {
        BASE + "sitemap-1.xml": "2024-05-02T11:00:00-05:00",
        BASE + "sitemap-2.xml": "2024-05-01T23:00:00-05:00",
        BASE + "sitemap-3.xml": None,
    }
    report = sk.validate(out / "sitemap.xml", published_at=BASE + "sitemap.xml")
    # only the shard the input gave no date: the stale-lastmod check compares instants
    assert [(f.rule, "3 sitemaps" in f.message) for f in report.findings] == [("SM508", True)]


def test_the_fast_and_forked_paths_give_the_same_index_lastmods(tmp_path: Path) -> None:
    from sitemapkit.io.sources import write_inputs

    offsets = ["+14:00", "-12:00", "+00:00", "+05:30"]
    rows = [
        f"{BASE}p{i},2024-0{1 + i % 9}-{1 + i % 27:02d}T{i % 24:02d}:00:00{offsets[i % 4]}"
        for i in range(2_500)
    ]
    src = tmp_path / "in.csv"
    src.write_text("loc,lastmod\n" + "\n".join(rows) + "\n")
    got = []
    for k, parallel_min in enumerate((0, 1 << 40)):  # forked, then sequential (blocks)
        out = tmp_path / f"out{k}"
        with sk.SitemapWriter(out, base_url=BASE, max_urls=700) as w:
            write_inputs(w, [str(src)], parallel_min=parallel_min)
        got.append(_index(out / "sitemap.xml"))
    expected = {}
    for n in range(4):
        part = [r.split(",")[1] for r in rows[700 * n : 700 * (n + 1)]]
        expected[f"{BASE}sitemap-{n + 1}.xml"] = max(part, key=dt.datetime.fromisoformat)
    assert got == [expected, expected]


def test_a_first_state_run_stamps_no_build_time(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for i in range(30):
        (site / f"p{i}.html").write_text(f"page {i}")
    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    with sk.SitemapWriter(out, base_url=BASE, state=state, content_from=site) as w:
        for i in range(30):
            w.add(BASE + f"p{i}")
        w.add(sk.Url(BASE + "dated", lastmod="2024-05-01"))
    data = (out / "sitemap.xml").read_text()
    assert data.count("<lastmod>") == 1  # only the input's own
    report = sk.validate(out / "sitemap.xml", published_at=BASE + "sitemap.xml")
    assert report.findings == []  # no SM306: no page carries the run's time


def test_the_sm403_hint_says_what_the_writer_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"<url><loc>{BASE}a</loc><priority>0.85</priority></url>\n"
        f"<url><loc>{BASE}b</loc><priority>.5</priority></url>\n"
        "</urlset>\n"
    )
    report = sk.validate(path, published_at=BASE + "s.xml")
    hints = [f.message for f in report.findings if f.rule == "SM403"]
    # 0.85 is kept (issue #11 §3), never rounded: the hint says the writer writes it as is
    assert "writes it as 0.85;" in hints[0] and "write 0.5 " in hints[1], hints
    # and the writer, given the record read back, writes exactly that
    records = [r.record for r in sk.read_file(str(path))]
    assert b"<priority>0.85</priority>" in sk.dumps(records)
    assert b"<priority>0.5</priority>" in sk.dumps(records)


def test_the_stale_index_check_compares_instants_and_still_sees_days(tmp_path: Path) -> None:
    def check(index_lastmod: str, page_lastmod: str) -> list[str]:
        (tmp_path / "sitemap.xml").write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"<sitemap><loc>{BASE}s1.xml</loc><lastmod>{index_lastmod}</lastmod></sitemap>\n"
            "</sitemapindex>\n"
        )
        (tmp_path / "s1.xml").write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"<url><loc>{BASE}p</loc><lastmod>{page_lastmod}</lastmod></url>\n"
            "</urlset>\n"
        )
        report = sk.validate(tmp_path / "sitemap.xml", published_at=BASE + "sitemap.xml")
        return [f.rule for f in report.findings]

    assert check("2024-05-02", "2024-05-03") == ["SM508"]  # a day before, both bare
    assert check("2024-05-02T11:00:00-05:00", "2024-05-03T00:30:00+14:00") == []  # later
    assert check("2024-05-02T09:00:00+00:00", "2024-05-03T00:30:00+14:00") == ["SM508"]
