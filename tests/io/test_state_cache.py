"""The cache of an incremental run (a plain input staged range by range, see
:mod:`sitemapkit.io.state`): a next run whose ranges hold the same locs and fingerprints
at the same lines copies the unchanged ranges and takes the last run's shards instead of
merging, and must give exactly what the merge gives; any other change takes the merge."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import sitemapkit as sk
from sitemapkit.io.sources import write_inputs
from sitemapkit.io.state import changed_in_last_run

from ..drill import BASE, listed, which

N = 40_000  # three ranges of lines (16,384 a range)
MAX_URLS = 9_000  # five shards
T0 = dt.datetime(2024, 5, 1, 8, 0, tzinfo=dt.UTC)

Rows = list[tuple[str, ...]]  # loc, then lastmod and priority (or none of them)


def _rows(columns: int = 3) -> Rows:
    """An escaped character in some locs, a repeated loc far from its first (the first
    stays), two priorities; with one column, locs only (change times of the state's)."""
    rows = [
        (
            f"{BASE}p/{i}" + ("?a=1&b=2" if i % 31 == 0 else ""),
            f"2024-01-{1 + i % 28:02d}",
            "0.8" if i % 1000 == 7 else "0.5",
        )[:columns]
        for i in range(N)
    ]
    rows[30_000] = rows[12]
    return rows


def _csv(path: Path, rows: Rows) -> Path:
    head = ",".join(["loc", "lastmod", "priority"][: len(rows[0])])
    path.write_text(head + "\n" + "".join(",".join(r) + "\n" for r in rows))
    return path


def _write(src: Path, out: Path, state: Path, now: dt.datetime, max_urls: int) -> sk.WriteResult:
    with sk.SitemapWriter(
        out, base_url=BASE, max_urls=max_urls, state=state, now=now, gzip=False
    ) as w:
        write_inputs(w, [str(src)], parallel_min=0)
    return w.result


def _caches(state: Path) -> list[Path]:
    return sorted(state.parent.glob(state.name + ".cache-*"))


def _url_file(state: Path) -> bytes:
    db = sqlite3.connect(state)
    try:
        (name,) = db.execute("SELECT value FROM meta WHERE key='urls'").fetchone()
    finally:
        db.close()
    return (state.parent / name).read_bytes()


def _seen(out: Path, state: Path, result: sk.WriteResult) -> tuple[object, ...]:
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return (
        files,
        _url_file(state),
        result.changes,
        result.duplicates,
        result.duplicate_examples,
        sorted(result.rewritten),
        list(changed_in_last_run(state)),
    )


def _edit(
    rows: Rows, at: Callable[[int], bool], how: Callable[[tuple[str, ...]], tuple[str, ...]]
) -> Rows:
    return [how(r) if at(i) else r for i, r in enumerate(rows)]


def _lockstep(tmp_path: Path, steps: list[tuple[str, Rows, int, int]]) -> list[tuple[object, ...]]:
    """Run ``steps`` (what, rows, max_urls, caches kept after it) on two states in
    lockstep: one keeps its cache, the other's is deleted before each run (so it
    merges). Everything a run gives must agree; returns what each step gave."""
    cached_state, merged_state = tmp_path / "c" / "s.sqlite", tmp_path / "m" / "s.sqlite"
    for state in (cached_state, merged_state):
        state.parent.mkdir()
    got = []
    for k, (what, rows, max_urls, caches) in enumerate(steps):
        src = _csv(tmp_path / f"in-{k}.csv", rows)
        now = T0 + dt.timedelta(hours=k)
        for p in _caches(merged_state):
            shutil.rmtree(p)
        seen = []
        for state in (cached_state, merged_state):
            out = state.parent / "out"
            result = _write(src, out, state, now, max_urls)
            seen.append(_seen(out, state, result))
        assert seen[0] == seen[1], what
        assert len(_caches(cached_state)) == caches, what  # this run's, or none
        got.append(seen[0])
    return got


def test_a_rerun_from_the_cache_gives_what_the_merge_gives(tmp_path: Path) -> None:
    a = _rows()
    later = "2024-03-03"
    steps = [
        ("first", a, MAX_URLS, 1),
        ("nothing changed", a, MAX_URLS, 1),
        # lastmods of one range, longer ones: the same lines and fingerprints
        (
            "lastmods",
            _edit(a, lambda i: 20_000 <= i < 21_000, lambda r: (r[0], later, r[2])),
            MAX_URLS,
            1,
        ),
        ("back", a, MAX_URLS, 1),
        # other limits: the last run's shards are kept while they fit
        ("smaller shards", a, 7_000, 1),
        # a priority changes a fingerprint: staged anew and merged
        ("priority", _edit(a, lambda i: i == 33_333, lambda r: (r[0], r[1], "0.8")), 7_000, 1),
        # a loc changes: merged
        ("loc", _edit(a, lambda i: i == 100, lambda r: (BASE + "moved", *r[1:])), 7_000, 1),
        # a row more: other ranges, merged, then the cache of that run
        ("appended", [*a, (BASE + "tail", "2024-05-05", "0.5")], 7_000, 1),
        ("appended again", [*a, (BASE + "tail", "2024-05-05", "0.5")], 7_000, 1),
        ("a row fewer", a[:-1], 7_000, 1),
        # a row without a lastmod: still the fast path, its lastmod is the change time
        ("no lastmod", _edit(a, lambda i: i == 5, lambda r: (r[0], "", r[2])), 7_000, 1),
        # a value the fast path does not take (no seconds): row by row, no cache is kept
        (
            "not plain",
            _edit(a, lambda i: i == 5, lambda r: (r[0], "2024-05-01T10:00Z", r[2])),
            7_000,
            0,
        ),
        ("after it", a, 7_000, 1),
        ("and again", a, 7_000, 1),
    ]
    got = _lockstep(tmp_path, steps)
    changes = {what: g[2] for (what, *_), g in zip(steps, got, strict=True)}
    rewritten = {what: g[5] for (what, *_), g in zip(steps, got, strict=True)}
    assert changes["nothing changed"] == {
        "added": 0,
        "changed": 0,
        "unchanged": N - 1,
        "removed": 0,
    }
    assert rewritten["nothing changed"] == rewritten["and again"] == []
    assert changes["lastmods"] == changes["nothing changed"]
    # rows 20,000-20,999, 9,000 a shard (under a new generation's name)
    assert [re.sub(r"-[0-9a-f]{10}(?=\.xml)", "", n) for n in rewritten["lastmods"]] == [
        "sitemap-3.xml"
    ]
    # p/100 moved; the priority of the step before is back
    assert changes["loc"] == {"added": 1, "changed": 1, "unchanged": N - 3, "removed": 1}


def test_locs_alone_keep_their_change_times_from_the_cache(tmp_path: Path) -> None:
    """Without a lastmod column every entry's lastmod is the state's change time: a run
    from the cache stamps them as the merge does."""
    a = _rows(columns=1)
    b = _edit(a, lambda i: i == 25_000, lambda r: (BASE + "new-page",))
    steps = [("first", a, MAX_URLS, 1), ("new page", b, MAX_URLS, 1), ("same", b, MAX_URLS, 1)]
    steps += [("same again", b, MAX_URLS, 1)]
    got = _lockstep(tmp_path, steps)
    (index,) = (d for n, d in got[3][0].items() if n == "sitemap.xml")  # type: ignore[attr-defined]
    assert b"2024-05-01T09:00:00+00:00" in index  # the shard of the new page, changed then
    assert b"<lastmod>2024-05-01T09:00:00+00:00</lastmod></url>" in b"".join(got[3][0].values())  # type: ignore[attr-defined]


def _tamper(state: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (as long) in the cached entry lines."""
    (cache,) = _caches(state)
    (part,) = (p for p in cache.glob("part-*") if old in p.read_bytes())
    data = part.read_bytes()
    assert data.count(old) == 1 and len(old) == len(new)
    part.write_bytes(data.replace(old, new))


def test_a_range_whose_bytes_did_not_change_is_copied_not_formatted(tmp_path: Path) -> None:
    """Proved by a cache changed behind the state's back: an unchanged range's entry lines
    come from the cache; a range whose bytes changed is formatted anew; a change of a loc
    stages every range anew."""
    rows = _rows()
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    src = _csv(tmp_path / "a.csv", rows)
    _write(src, out, state, T0, MAX_URLS)
    tampered = b"<loc>" + f"{BASE}p/1001</loc>".encode()  # in the first range
    _tamper(state, tampered, tampered.replace(b"1001", b"X001"))
    _write(src, out, state, T0 + dt.timedelta(hours=1), MAX_URLS)
    locs = {loc for loc, _ in listed(out)}
    assert f"{BASE}p/X001" in locs and f"{BASE}p/1001" not in locs
    # the first range's bytes change (a lastmod): formatted, the right loc again
    rows[1002] = (rows[1002][0], "2024-09-09", rows[1002][2])
    src = _csv(tmp_path / "b.csv", rows)
    _tamper(state, tampered.replace(b"1001", b"X001"), tampered.replace(b"1001", b"Y001"))
    _write(src, out, state, T0 + dt.timedelta(hours=2), MAX_URLS)
    locs = {loc for loc, _ in listed(out)}
    assert f"{BASE}p/1001" in locs and f"{BASE}p/Y001" not in locs
    # a tampered range two ranges away from a changed loc: all staged anew
    _tamper(state, tampered, tampered.replace(b"1001", b"Z001"))
    rows[39_000] = (BASE + "elsewhere", *rows[39_000][1:])
    src = _csv(tmp_path / "c.csv", rows)
    result = _write(src, out, state, T0 + dt.timedelta(hours=3), MAX_URLS)
    locs = {loc for loc, _ in listed(out)}
    assert f"{BASE}p/1001" in locs and f"{BASE}p/Z001" not in locs
    assert result.changes["added"] == 1 and result.changes["removed"] == 1


def test_a_cache_that_is_not_whole_is_not_used(tmp_path: Path) -> None:
    """A cache file shorter or longer than its record, or missing, or a record of
    another key or format: the run merges."""
    rows = _rows()
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    src = _csv(tmp_path / "a.csv", rows)
    _write(src, out, state, T0, MAX_URLS)
    expected = {loc for loc, _ in listed(out)}
    damages = [(what, name) for what in ("short", "long", "missing") for name in ("cids", "part")]
    damages += [("record", "key"), ("record", "format")]  # another version's, say
    for k, (damage, name) in enumerate(damages):
        (cache,) = _caches(state)
        tampered = b"<loc>" + f"{BASE}p/1001</loc>".encode()
        _tamper(state, tampered, tampered.replace(b"1001", b"X001"))
        path = cache / ("cids" if name == "cids" else "part-000002")  # the last range's
        if damage == "record":
            db = sqlite3.connect(state)
            with db:
                (text,) = db.execute("SELECT value FROM meta WHERE key='cache_ranges'").fetchone()
                record = json.loads(text)
                record[name] = "0.0.1 other" if name == "key" else record[name] + 1
                db.execute(
                    "UPDATE meta SET value=? WHERE key='cache_ranges'", (json.dumps(record),)
                )
            db.close()
        elif damage == "short":
            path.write_bytes(path.read_bytes()[:-4])
        elif damage == "long":
            path.write_bytes(path.read_bytes() + b"\0\0\0\0")
        else:
            path.unlink()
        result = _write(src, out, state, T0 + dt.timedelta(hours=k + 1), MAX_URLS)
        assert {loc for loc, _ in listed(out)} == expected, (damage, name)
        assert result.changes["unchanged"] == N - 1


def test_killed_at_many_moments_of_a_cached_run_leaves_old_or_new_and_recovers(
    tmp_path: Path,
) -> None:
    """kill -9 at moments spread over runs that reuse the cache (the ranges copied, the
    columns, the state's writes, the cache kept, the publish): the folder shows the old
    set or the new one whole, and the next run completes it and reuses the cache again."""
    rows = [(f"{BASE}p/{i}", "2024-01-01") for i in range(N)]
    named: dict[str, list[tuple[str, str]]] = {}
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    cmd = [sys.executable, "-m", "sitemapkit", "write", "-o", str(out), "--base-url", BASE]
    cmd += ["--state", str(state), "--max-urls", str(MAX_URLS)]
    srcs = []
    for k in range(2):  # two inputs that differ in one range's lastmods only
        lm = f"2024-0{k + 1}-01"
        version = [(loc, lm if 17_000 <= i < 18_000 else was) for i, (loc, was) in enumerate(rows)]
        named[str(k)] = [(loc, lastmod) for loc, lastmod in version]
        srcs.append(_csv(tmp_path / f"{k}.csv", version))
    start = time.monotonic()
    subprocess.run([*cmd, str(srcs[0])], check=True, capture_output=True)
    whole = time.monotonic() - start
    rng = random.Random(9)
    outcomes = set()
    moments = 6
    for k in range(moments):
        old, new = str(k % 2), str((k + 1) % 2)
        assert which(out, named) == old
        proc = subprocess.Popen(
            [*cmd, str(srcs[int(new)])], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(1.2 * whole * (k + rng.random()) / moments)
        proc.kill()
        proc.wait()
        mid = which(out, named)
        assert mid in (old, new)
        outcomes.add("old" if mid == old else "new")
        done = subprocess.run(
            [*cmd, str(srcs[int(new)])], check=True, capture_output=True, text=True
        )
        assert which(out, named) == new
        assert f"0 added, 0 changed, 0 removed, {N:,} unchanged" in done.stdout
        assert len(_caches(state)) == 1
    assert outcomes == {"old", "new"}


def test_no_url_is_taken_after_a_file_the_cache_gave(tmp_path: Path) -> None:
    """The cached ranges have no sort keys: a URL added after them is refused, clearly,
    and nothing is published; added before the file, the file is merged with it."""
    rows = _rows()
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    src = _csv(tmp_path / "a.csv", rows)
    _write(src, out, state, T0, MAX_URLS)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    w = sk.SitemapWriter(out, base_url=BASE, max_urls=MAX_URLS, state=state, gzip=False)
    with pytest.raises(RuntimeError, match="add them before the file"), w:
        write_inputs(w, [str(src)], parallel_min=0)
        w.add(BASE + "extra")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    with sk.SitemapWriter(out, base_url=BASE, max_urls=MAX_URLS, state=state, gzip=False) as w:
        w.add(BASE + "extra")
        write_inputs(w, [str(src)], parallel_min=0)
    assert w.result.changes == {"added": 1, "changed": 0, "unchanged": N - 1, "removed": 0}


def test_the_shard_fields_are_set_the_same_whatever_the_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URL file's shard fields are set 256 KiB at a time: read 64 bytes at a time
    (shorter than a line: the read grows until a line ends), the state is the same."""
    from sitemapkit.io import state as state_module

    rows = _rows()
    more = [*rows[:20_000], (BASE + "new", *rows[0][1:]), *rows[20_000:]]
    got = []
    for chunk in (64, state_module._REWRITE):
        monkeypatch.setattr(state_module, "_REWRITE", chunk)
        state, out = tmp_path / f"{chunk}" / "s.sqlite", tmp_path / f"{chunk}" / "out"
        state.parent.mkdir()
        for k, version in enumerate((rows, more)):  # every URL placed, then one
            src = _csv(tmp_path / f"in-{k}.csv", version)
            result = _write(src, out, state, T0 + dt.timedelta(hours=k), MAX_URLS)
            got.append(_seen(out, state, result))
    assert got[:2] == got[2:]
    shards = {line.split(b"\t")[1] for line in _url_file(tmp_path / "64" / "s.sqlite").splitlines()}
    assert shards == {b"%08x" % n for n in range(1, 6)}


def test_the_merge_takes_stretches_between_changes_as_one_by_one_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge takes the stretches of unchanged URLs between scattered changes at once
    (the window halves at each change, doubles at each stretch): the same state, counts
    and files as taking every key by itself, over runs that add, remove, change and
    repeat URLs here and there, and one that changes half of them."""
    from sitemapkit.io import state as state_module

    rng = random.Random(3)
    pages = [f"{BASE}{rng.getrandbits(40):010x}/{i}" for i in range(12_000)]
    first = [(loc, "0.5") for loc in pages]
    second = [(loc, "0.8" if rng.random() < 0.01 else p) for loc, p in first if rng.random() > 0.01]
    for _ in range(120):
        second.insert(rng.randrange(len(second)), (f"{BASE}new/{rng.getrandbits(40):010x}", "0.5"))
    second += [second[i] for i in rng.sample(range(len(second)), 5)]  # repeats
    third = [(loc, "0.9" if rng.random() < 0.5 else p) for loc, p in second]
    got = []
    for how in ("at once", "one by one"):
        if how == "one by one":
            monkeypatch.setattr(state_module._Merge, "take", lambda self, block: 0)
        state, out = tmp_path / how / "s.sqlite", tmp_path / how / "out"
        state.parent.mkdir()
        for k, rows in enumerate((first, second, third)):
            src = tmp_path / f"{k}.csv"
            src.write_text("loc,priority\n" + "".join(f"{a},{b}\n" for a, b in rows))
            with sk.SitemapWriter(
                out, base_url=BASE, max_urls=2_000, state=state, now=T0 + dt.timedelta(hours=k)
            ) as w:
                write_inputs(w, [str(src)], fast_path=False)
            got.append(_seen(out, state, w.result))
    assert got[:3] == got[3:]
    changes = [g[2] for g in got[:3]]
    assert changes[1]["added"] == 120 and changes[1]["removed"] == 12_000 - len(set(second)) + 120
    assert 0 < changes[1]["changed"] < 300 and changes[2]["changed"] > 5_000


def test_a_text_file_is_staged_and_cached_as_its_lines_would_be(tmp_path: Path) -> None:
    """A text file of URLs takes the forked staging and the cache too: the same state,
    counts and files as its lines added one by one, run after run."""
    a = [f"{BASE}t/{i}" + ("?x=1&y=2" if i % 7 == 0 else "") for i in range(N)]
    b = [*a[:20_000], BASE + "t/new", *a[20_001:]]
    got = []
    for fast in (True, False):
        state, out = tmp_path / f"{fast}" / "s.sqlite", tmp_path / f"{fast}" / "out"
        state.parent.mkdir()
        for k, rows in enumerate((a, a, b, b)):
            src = tmp_path / f"{k}.txt"
            src.write_text("".join(f"{loc}\n" for loc in rows))
            with sk.SitemapWriter(
                out, base_url=BASE, max_urls=MAX_URLS, state=state, now=T0 + dt.timedelta(hours=k)
            ) as w:
                write_inputs(w, [str(src)], fast_path=fast)
            got.append(_seen(out, state, w.result))
        assert len(_caches(state)) == (1 if fast else 0)
    assert got[:4] == got[4:]
    assert got[2][2] == {"added": 1, "changed": 0, "unchanged": N - 1, "removed": 1}
