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

from .conftest import NS, cli_bytes, parse

BASE = "https://example.com/"
T1 = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.UTC)
T2 = dt.datetime(2024, 2, 1, 12, 0, tzinfo=dt.UTC)


def run(
    out: Path, state: Path, rows: list[tuple[str, str | None]], now: dt.datetime, **kw: object
) -> sk.WriteResult:
    with sk.SitemapWriter(out, base_url=BASE, state=state, now=now, max_urls=10, **kw) as w:  # type: ignore[arg-type]
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


def test_killed_mid_run_recovers(tmp_path: Path) -> None:
    import time

    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    rows = "".join(f"{BASE}p{i},v1\n" for i in range(20_000))
    src = tmp_path / "in.csv"
    src.write_text("loc,content_hash\n" + rows)
    cmd = [
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
        "1000",
        "--gzip",
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    old = {n: b for n, (b, _) in snapshot(out).items()}
    src.write_text("loc,content_hash\n" + rows.replace(",v1", ",v2"))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        staged = [p for p in tmp_path.iterdir() if p.name.startswith(".out.sitemapkit-")]
        if staged and any(len(os.listdir(s)) >= 3 for s in staged):
            break  # it is writing shards
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    mid = {n: b for n, (b, _) in snapshot(out).items()}
    subprocess.run(cmd, check=True, capture_output=True)  # the next run
    new = {n: b for n, (b, _) in snapshot(out).items()}
    assert mid in (old, new)  # never a mix
    assert new != old
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.sitemapkit-")]
    # every page changed in the killed run's input: all lastmods moved together
    assert len(set(lastmods(out).values())) == 1
    assert None not in lastmods(out).values()


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
