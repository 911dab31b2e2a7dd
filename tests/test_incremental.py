"""Incremental runs with a state file: true lastmod, stable shards, untouched files."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sitemapkit as sk

from . import drill
from .conftest import NS, cli_bytes, parse

BASE = "https://example.com/"
T1 = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.UTC)
T2 = dt.datetime(2024, 2, 1, 12, 0, tzinfo=dt.UTC)


def run(
    out: Path, state: Path, rows: list[tuple[str, str | None]], now: dt.datetime, **kw: object
) -> sk.WriteResult:
    opts = {"max_urls": 10, **kw}
    with sk.SitemapWriter(out, base_url=BASE, state=state, now=now, **opts) as w:  # type: ignore[arg-type]
        for loc, content in rows:
            w.add(BASE + loc, content_hash=content)
    return w.result


def lastmods(out: Path) -> dict[str, str | None]:
    got = {}
    for p in out.iterdir():
        root = parse(p)
        for u in root.iterfind("s:url", NS):
            lm = u.find("s:lastmod", NS)
            got[u.find("s:loc", NS).text] = None if lm is None else lm.text
    return got


def index_lastmods(out: Path) -> dict[str, str | None]:
    got = {}
    for e in parse(out / "sitemap.xml").iterfind("s:sitemap", NS):
        lm = e.find("s:lastmod", NS)
        got[e.find("s:loc", NS).text] = None if lm is None else lm.text
    return got


def snapshot(out: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}


def test_only_affected_shards_change(tmp_path: Path) -> None:
    out, state = tmp_path / "out", tmp_path / "state.sqlite"
    rows = [(f"p{i}", f"v1-{i}") for i in range(35)]
    first = run(out, state, rows, T1)
    assert first.changes == {"added": 35, "changed": 0, "unchanged": 0, "removed": 0}
    assert sorted(first.rewritten) == [f"sitemap-{n}.xml" for n in (1, 2, 3, 4)]
    before = snapshot(out)
    for name in before:  # make mtimes distinguishable
        os.utime(out / name, ns=(1_000_000_000, 1_000_000_000))
    before = snapshot(out)
    rows[12] = ("p12", "v2-12")  # content changed (shard 2)
    rows.append(("new", "v1"))  # a new URL lands in the last shard (4)
    del rows[31]  # removed from shard 4
    second = run(out, state, rows, T2)
    assert second.changes == {"added": 1, "changed": 1, "unchanged": 33, "removed": 1}
    # the changed shards take names the old index did not use; the old files go after it
    two, four = sorted(second.rewritten)
    assert re.fullmatch(r"sitemap-2-[0-9a-f]{10}\.xml", two)
    assert re.fullmatch(r"sitemap-4-[0-9a-f]{10}\.xml", four)
    assert sorted(second.removed) == ["sitemap-2.xml", "sitemap-4.xml"]
    after = snapshot(out)
    assert sorted(after) == sorted(["sitemap-1.xml", two, "sitemap-3.xml", four, "sitemap.xml"])
    for name in ("sitemap-1.xml", "sitemap-3.xml"):
        assert after[name] == before[name]  # same name, same bytes, same mtime
    assert after[two][0] != before["sitemap-2.xml"][0]
    lm = lastmods(out)
    assert lm[BASE + "p12"] == "2024-02-01T12:00:00+00:00"
    assert lm[BASE + "new"] == "2024-02-01T12:00:00+00:00"
    assert lm[BASE + "p3"] is None  # unchanged since the first run: change time unknown
    index = index_lastmods(out)
    assert index[BASE + "sitemap-1.xml"] is None  # no entry of it has a lastmod
    assert index[BASE + two] == "2024-02-01T12:00:00+00:00"


def test_without_content_hash_the_entry_is_the_fingerprint(tmp_path: Path) -> None:
    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    run(out, state, [("a", None), ("b", None)], T1)
    with sk.SitemapWriter(out, base_url=BASE, state=state, now=T2) as w:
        w.add(sk.Url(BASE + "a", priority=0.5))  # a field changed: a new entry
        w.add(BASE + "b")
    lm = lastmods(out)
    assert lm == {BASE + "a": "2024-02-01T12:00:00+00:00", BASE + "b": None}


def test_content_from_hashes_the_built_pages(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "index.html").write_text("home")
    (site / "docs" / "intro.html").write_text("v1")
    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    for now in (T1, T2):
        if now == T2:
            (site / "docs" / "intro.html").write_text("v2")
        with sk.SitemapWriter(out, base_url=BASE, state=state, now=now, content_from=site) as w:
            w.add(BASE)
            w.add(BASE + "docs/intro")
    assert lastmods(out) == {BASE: None, BASE + "docs/intro": "2024-02-01T12:00:00+00:00"}


def test_explicit_lastmod_wins_and_output_validates(tmp_path: Path) -> None:
    from sitemapkit.lint.xsd import xsd_errors

    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    with sk.SitemapWriter(out, base_url=BASE, state=state, now=T1, max_urls=2, gzip=True) as w:
        for i in range(5):
            w.add(sk.Url(BASE + f"x{i}", lastmod="2020-05-05"))
        w.add(BASE + "x0")  # duplicate
    assert w.result.duplicates == 1
    for f in w.result.files:
        data = (out / f.name).read_bytes()
        if f.name.endswith(".gz"):
            import gzip

            data = gzip.decompress(data)
        assert xsd_errors(data) == []
    assert set(lastmods(out).values()) == {"2020-05-05"}


def test_state_belongs_to_one_output(tmp_path: Path) -> None:
    state = tmp_path / "s.sqlite"
    run(tmp_path / "a", state, [("a", None)], T1)
    with pytest.raises(ValueError, match="another output"):
        run(tmp_path / "b", state, [("a", None)], T1)


def _write_cmd(src: Path, out: Path, state: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sitemapkit",
        "write",
        str(src),
        "-o",
        str(out),
        "--base-url",
        BASE,
        "--state",
        str(state),
        "--max-urls",
        "200",
        "--gzip",
    ]


def _published(out: Path) -> list[tuple[str, str]]:
    """The set a reader who follows sitemap.xml sees (changed shards may sit beside the
    live index under new names until it is renamed in), sorted."""
    return sorted(drill.listed(out))


def test_killed_at_many_moments_leaves_old_or_new_and_recovers(tmp_path: Path) -> None:
    """kill -9 at moments spread over a whole --state run (reading, the merge, the
    state's own writes, the shards, the publish): the published set is the old one or
    the new one whole, the state names files that exist, and the next run completes it
    so that the state agrees with what is published."""
    import random
    import time

    from sitemapkit.io.state import changed_in_last_run

    out, state, src = tmp_path / "out", tmp_path / "s.sqlite", tmp_path / "in.csv"
    cmd = _write_cmd(src, out, state)
    rows = "".join(f"{BASE}p{i},v0\n" for i in range(2_000))
    src.write_text("loc,content_hash\n" + rows)
    subprocess.run(cmd, check=True, capture_output=True)
    # timed: a run that changes every URL and writes every shard, as the ones below do
    # (a first run is no measure of them: it may be faster or slower by any factor)
    time.sleep(1.02 - time.time() % 1)
    src.write_text("loc,content_hash\n" + rows.replace(",v0", ",t"))
    start = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True)
    whole = time.monotonic() - start
    rng = random.Random(15)
    moments = 8
    outcomes = set()
    for k in range(moments):
        old = _published(out)
        # lastmods are whole seconds: start in the next one, so the new set differs
        time.sleep(1.02 - time.time() % 1)
        src.write_text("loc,content_hash\n" + rows.replace(",v0", f",v{k + 1}"))
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # spread past the first run's length: a later run may be slower, and the last
        # moments must reach the far side of the publish (a run already ended is 'new')
        time.sleep(1.25 * whole * (k + rng.random()) / moments)
        proc.kill()
        proc.wait()
        mid = _published(out)
        list(changed_in_last_run(state))  # the state names a URL file that exists
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)  # the next run
        new = _published(out)
        assert mid in (old, new)  # never a mix
        outcomes.add("old" if mid == old else "new")
        assert new != old
        assert not drill.staging(out)  # no staging folder left
        assert len([p for p in tmp_path.iterdir() if ".urls-" in p.name]) == 1
        # every page changed in the killed run's input: all lastmods moved together
        assert len(set(lastmods(out).values())) == 1
        assert None not in lastmods(out).values()
        assert "2,000 unchanged" in done.stdout or "2,000 changed" in done.stdout
        again = subprocess.run(cmd, check=True, capture_output=True, text=True)
        assert "0 added, 0 changed, 0 removed, 2,000 unchanged" in again.stdout
        assert "rewritten: nothing" in again.stdout
        assert _published(out) == new
    assert outcomes == {"old", "new"}  # the moments reached both sides of the publish


def test_a_big_rerun_keeps_shards_and_counts_exactly(tmp_path: Path) -> None:
    """More URLs than the merge takes in one block: blocks of unchanged URLs go at once,
    the others one by one, and the outcome is the same as URL by URL."""
    from sitemapkit.io.state import changed_in_last_run

    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    rows = [(f"p{i:05d}&x", f"v1-{i}") for i in range(12_000)]
    kw = {"max_urls": 1000}

    def shard_of() -> dict[str, str]:
        """Each URL's shard, by number (a changed shard takes a new generation name)."""
        return {
            loc: _logical(p.name)
            for p in out.iterdir()
            if p.name != "sitemap.xml"
            for loc in _locs(p)
        }

    first = run(out, state, rows, T1, **kw)
    assert first.changes["added"] == 12_000
    before_shards, before = shard_of(), snapshot(out)
    second_rows = list(rows)
    second_rows[5_000] = ("p05000&x", "v2")  # changed (shard 6)
    del second_rows[9_000]  # removed (shard 10)
    second_rows.insert(100, ("zz-new", "v1"))  # new: the last shard is full, so a new one
    second_rows.append(("p00007&x", "v9"))  # a repeat: the first occurrence stays
    second = run(out, state, second_rows, T2, **kw)
    assert second.changes == {"added": 1, "changed": 1, "unchanged": 11_998, "removed": 1}
    assert second.duplicates == 1
    assert second.duplicate_examples == [BASE + "p00007&x"]
    assert sorted(map(_logical, second.rewritten)) == [
        "sitemap-10.xml",
        "sitemap-13.xml",
        "sitemap-6.xml",
    ]
    after_shards, after = shard_of(), snapshot(out)
    moved = {loc for loc, name in after_shards.items() if before_shards.get(loc, name) != name}
    assert moved == set()  # every URL stayed in its shard
    assert after_shards[BASE + "zz-new"] == "sitemap-13.xml"
    for n in (1, 2, 3, 4, 5, 7, 8, 9, 11, 12):
        assert after[f"sitemap-{n}.xml"] == before[f"sitemap-{n}.xml"]  # bytes and mtime
    assert list(changed_in_last_run(state)) == [
        BASE + "p05000&x",
        BASE + "p09000&x",
        BASE + "zz-new",
    ]
    third = run(out, state, second_rows, T2, **kw)
    assert third.changes["unchanged"] == 12_000
    assert third.rewritten == []


def _logical(name: str) -> str:
    """A shard's name without its generation tag: sitemap-6-0123456789.xml -> sitemap-6.xml."""
    return re.sub(r"-[0-9a-f]{10}(?:-[0-9]+)?(?=\.xml)", "", name)


def _locs(path: Path) -> list[str]:
    return [u.text for u in parse(path).iterfind("s:url/s:loc", NS)]


def test_a_state_of_the_earlier_format_is_taken_over(tmp_path: Path) -> None:
    """A state file that keeps its URLs in SQLite (written before the URL file): its
    shards and change times hold, and the run moves the URLs to the URL file."""
    import hashlib
    import sqlite3

    from sitemapkit.core.serialize import url_entry
    from sitemapkit.core.w3cdate import format_lastmod

    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    t0, t1 = format_lastmod(T1 - dt.timedelta(days=30)), format_lastmod(T1)
    db = sqlite3.connect(state)
    db.executescript(
        "CREATE TABLE urls(loc TEXT PRIMARY KEY, shard INTEGER NOT NULL, fp BLOB NOT NULL,"
        " content BLOB, changed TEXT NOT NULL);"
        "CREATE TABLE shards(n INTEGER PRIMARY KEY, digest BLOB NOT NULL, changed TEXT NOT NULL);"
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE removed(loc TEXT PRIMARY KEY, at TEXT NOT NULL);"
    )
    for i in range(12):
        loc = f"{BASE}p{i}"
        fp = hashlib.blake2b(url_entry(sk.Url(loc), lastmod=None)[0].encode(), digest_size=16)
        # p0..p5 in shard 2, the others in shard 1; p3 changed at t1, the others never
        db.execute(
            "INSERT INTO urls VALUES (?,?,?,NULL,?)",
            (loc, 2 if i < 6 else 1, fp.digest(), t1 if i == 3 else t0),
        )
    db.executemany(
        "INSERT INTO meta VALUES (?,?)",
        [("first_run", t0), ("last_run", t1), ("output", f"{out.resolve()} {BASE}")],
    )
    db.commit()
    db.close()
    with sk.SitemapWriter(out, base_url=BASE, state=state, now=T2, max_urls=6) as w:
        for i in range(12):
            w.add(f"{BASE}p{i}")
    assert w.result.changes == {"added": 0, "changed": 0, "unchanged": 12, "removed": 0}
    assert _locs(out / "sitemap-2.xml") == [f"{BASE}p{i}" for i in range(6)]
    assert _locs(out / "sitemap-1.xml") == [f"{BASE}p{i}" for i in range(6, 12)]
    lm = lastmods(out)
    assert lm[BASE + "p3"] == t1 and lm[BASE + "p4"] is None
    db = sqlite3.connect(state)
    assert db.execute("SELECT COUNT(*) FROM urls").fetchone() == (0,)
    db.close()
    with sk.SitemapWriter(out, base_url=BASE, state=state, now=T2, max_urls=6) as w:
        for i in range(12):
            w.add(f"{BASE}p{i}")
    assert w.result.changes["unchanged"] == 12 and w.result.rewritten == []


def test_repeats_are_reported_in_input_order(tmp_path: Path) -> None:
    rows = [(f"u{i:02d}", None) for i in range(30)]
    rows += [(f"u{i:02d}", None) for i in range(29, -1, -1)]  # each again, backwards
    res = run(tmp_path / "out", tmp_path / "s.sqlite", rows, T1)
    assert res.duplicates == 30
    assert res.duplicate_examples == [f"{BASE}u{i:02d}" for i in range(29, 19, -1)]
    assert [
        loc
        for p in sorted((tmp_path / "out").iterdir())
        if p.name != "sitemap.xml"
        for loc in _locs(p)
    ] != []


def test_submit_changed_since_sends_what_the_last_run_changed(
    tmp_path: Path,
) -> None:
    import json

    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    run(out, state, [("a", "1"), ("b", "1"), ("c", "1")], T1)
    run(out, state, [("a", "1"), ("b", "2"), ("d", "1")], T2)  # b changed, c removed, d new
    code, out, _ = cli_bytes(
        [
            "submit",
            "indexnow",
            "--key",
            "0123456789abcdef",
            "--host",
            "example.com",
            "--changed-since",
            str(state),
            "--dry-run",
        ]
    )
    assert code == 0
    body = json.loads(out)
    assert body["urlList"] == [BASE + "b", BASE + "c", BASE + "d"]


def test_rows_without_lastmods_beside_rows_with_take_the_change_time(tmp_path: Path) -> None:
    """A lastmod column with empty fields: the block path (two forked stagers, 40,000
    rows) gives each row without a lastmod the time its entry last changed, and each row
    with one its own, as the row path does, on the first run and after a change."""
    from sitemapkit.io.sources import write_inputs

    def csv(priority_of_7: str) -> str:
        rows = [
            f"{BASE}p/{i},{'' if i % 3 else '2023-06-0' + str(1 + i % 9)},"
            f"{priority_of_7 if i == 7 else '0.5'}\n"
            for i in range(40_000)
        ]
        return "loc,lastmod,priority\n" + "".join(rows)

    got = {}
    for fast in (True, False):
        out, state = tmp_path / f"out-{fast}", tmp_path / f"s-{fast}.sqlite"
        for k, (now, text) in enumerate(((T1, csv("0.5")), (T2, csv("0.9")))):
            src = tmp_path / f"in-{fast}-{k}.csv"
            src.write_text(text)
            with sk.SitemapWriter(out, base_url=BASE, state=state, now=now) as w:
                write_inputs(w, [str(src)], fast_path=fast)
            got[fast, k] = lastmods(out)
        # the block path keeps its ranges' cache for the next run; the row path none
        assert len(list(tmp_path.glob(f"s-{fast}.sqlite.cache-*"))) == int(fast)
    assert got[True, 0] == got[False, 0] and got[True, 1] == got[False, 1]
    first, second = got[True, 0], got[True, 1]
    assert first[f"{BASE}p/3"] == "2023-06-04" and first[f"{BASE}p/7"] is None  # unknown
    assert second[f"{BASE}p/7"] == "2024-02-01T12:00:00+00:00"  # its priority changed
    assert second[f"{BASE}p/8"] is None and second[f"{BASE}p/9"] == "2023-06-01"
