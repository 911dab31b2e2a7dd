"""Publishing under kill -9 and a full disk (issue #16 §1, §2): the short drills.

bench/publish.py runs the full ones (150,000 URLs, 60 random kills per seed). At no moment
does a reader who follows ``sitemap.xml`` see a URL missing or listed twice or an index
naming a file that is not there: a kill before any step of the publish leaves one whole
set, the next run of any kind settles it (no staging folder, no file of the other set
left), and only files our runs published are ever removed.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import sitemapkit as sk
from sitemapkit.io.files import manifest_path

from .conftest import cli
from .drill import (
    BASE,
    Entry,
    Run,
    csv_text,
    kill_at_every_step,
    only_the_set,
    sets,
    staging,
    which,
)

# 4 shards of 600 <-> 3: A 2,000 URLs; B a fifth removed, a tenth changed, 133 new
N, MAX_URLS = 2_000, 600


@pytest.fixture
def drill(tmp_path: Path) -> tuple[Path, Path, dict[str, list[Entry]]]:
    a, b = sets(N)
    (tmp_path / "a.csv").write_text(csv_text(a))
    (tmp_path / "b.csv").write_text(csv_text(b))
    return tmp_path / "a.csv", tmp_path / "b.csv", {"A": a, "B": b}


def _settled(run: Run, shown: str, named: dict[str, list[Entry]]) -> None:
    """What the next run does first leaves the set the kill left, whole and alone."""
    sk.SitemapWriter(run.out, base_url=BASE)  # a run of any kind, not even closed
    assert staging(run.out) == []
    assert which(run.out, named) == shown
    only_the_set(run.out)


@pytest.mark.parametrize(
    ("mode", "old", "new"),
    [("plain", "A", "B"), ("state", "B", "A"), ("forked", "A", "B")],
)
def test_a_kill_before_any_publish_step_leaves_one_whole_set(
    tmp_path: Path, drill: tuple[Path, Path, dict[str, list[Entry]]], mode: str, old: str, new: str
) -> None:
    src_a, src_b, named = drill
    srcs = {"A": src_a, "B": src_b}
    state = tmp_path / "state.sqlite" if mode == "state" else None
    run = Run(tmp_path / "out", MAX_URLS, state=state, forked=mode == "forked")
    first = run.write(srcs[old])
    assert first.returncode == 0, first.stderr
    if mode == "forked":
        assert "forked: True" in first.stdout  # the forked path wrote the shards
    assert which(run.out, named) == old
    kills = kill_at_every_step(
        run, srcs[new], named, after=lambda n, shown: _settled(run, shown, named)
    )
    # journal, 3-4 renames, the index, 3-4 removals, the manifest, the staging folder
    assert len(kills) >= 9
    assert {shown for _, shown, _ in kills} == {old, new}  # never "mixed: ..."
    assert [shown for _, shown, _ in kills].count(new) >= 3  # the index renamed: new from then
    assert which(run.out, named) == new  # the run that was not killed
    only_the_set(run.out)
    assert staging(run.out) == []


def test_random_kills_leave_one_whole_set_and_the_next_run_completes(
    tmp_path: Path, drill: tuple[Path, Path, dict[str, list[Entry]]]
) -> None:
    src_a, src_b, named = drill
    rng = random.Random(16)
    for state in (None, tmp_path / "state.sqlite"):
        run = Run(tmp_path / f"out-{state is not None}", MAX_URLS, state=state)
        run.write(src_a)
        full = run.timed(src_b)
        for src, name in ((src_a, "A"), (src_b, "B")):
            run.kill_after(src, rng.uniform(0, full))
            assert which(run.out, named) in ("A", "B")
            done = run.write(src)  # the next run
            assert done.returncode == 0, done.stderr
            assert which(run.out, named) == name
            only_the_set(run.out)
            assert staging(run.out) == []


def test_only_files_our_runs_published_are_removed(out: Path) -> None:
    def write(n: int) -> sk.WriteResult:
        with sk.SitemapWriter(out, base_url=BASE, max_urls=2) as w:
            for i in range(n):
                w.add(f"{BASE}{i}")
        return w.result

    write(8)  # sitemap-1..4.xml
    (out / "sitemap-9.xml.gz").write_bytes(b"placed by hand")
    res = write(4)
    assert res.removed == ["sitemap-3.xml", "sitemap-4.xml"]  # ours, not the hand-placed one
    assert (out / "sitemap-9.xml.gz").read_bytes() == b"placed by hand"
    assert "sitemap-9.xml.gz" in " ".join(res.notes)  # said, not deleted
    assert "sitemap-9" not in manifest_path(out, "sitemap").read_text()
    # a file of our names that we did not write is never overwritten either
    (out / "sitemap-3.xml").write_bytes(b"placed by hand")
    res = write(6)
    assert (out / "sitemap-3.xml").read_bytes() == b"placed by hand"
    third = res.files[2].name
    assert third.startswith("sitemap-3-")
    assert sorted(os.listdir(out)) == sorted(
        [
            "sitemap-1.xml",
            "sitemap-2.xml",
            third,
            "sitemap-3.xml",
            "sitemap-9.xml.gz",
            "sitemap.xml",
        ]
    )
    assert res.removed == []


def test_the_note_says_what_was_removed_and_what_was_left(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    out = tmp_path / "o"
    src.write_text("".join(f"{BASE}{i}\n" for i in range(6)))
    assert cli(["write", str(src), "-o", str(out), "--base-url", BASE, "--max-urls", "2"])[0] == 0
    (out / "sitemap-9.xml").write_text("mine")
    src.write_text("".join(f"{BASE}{i}\n" for i in range(4)))
    code, _, err = cli(["write", str(src), "-o", str(out), "--base-url", BASE, "--max-urls", "2"])
    assert code == 0
    assert "note: removed stale files of an earlier run: sitemap-3.xml\n" in err
    assert "left 1 file that no run of ours published" in err
    assert "sitemap-9.xml" in err
    assert (out / "sitemap-9.xml").read_text() == "mine"


def _limited(limit: int) -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("state", [False, True])
def test_a_full_disk_leaves_the_old_set_whole_and_says_how_to_fix_it(
    tmp_path: Path, drill: tuple[Path, Path, dict[str, list[Entry]]], state: bool
) -> None:
    src_a, src_b, named = drill
    run = Run(tmp_path / "out", MAX_URLS, gzip=False, state=tmp_path / "s" if state else None)
    assert run.write(src_a).returncode == 0
    before = {p.name: p.read_bytes() for p in run.out.iterdir()}
    # a file-size limit below one shard: the write of the first shard fails (EFBIG),
    # as a full disk fails it (ENOSPC); the state file and its journal stay small
    proc = subprocess.run(
        [sys.executable, "-m", "sitemapkit", *run.argv(src_b)],
        capture_output=True,
        text=True,
        check=False,
        env=run.env(),
        preexec_fn=lambda: _limited(20_000),
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    if state:  # the state file is larger than any shard: it meets the limit first
        assert "sitemapkit: error: could not use the state file: disk I/O error;" in proc.stderr
        assert "hint: check the free space and the file-size limit (ulimit -f)" in proc.stderr
    else:
        assert "sitemapkit: error: could not write sitemap-1.xml: File too large;" in proc.stderr
        assert "hint: a file-size limit (ulimit -f) stopped the file" in proc.stderr
    assert "nothing was published, the earlier sitemaps are as they were" in proc.stderr
    assert {p.name: p.read_bytes() for p in run.out.iterdir()} == before
    assert which(run.out, named) == "A"
    assert staging(run.out) == []


class _Killed(BaseException):
    """Stands for the kill: raised at one step, and the writer cleans nothing up."""


def _die_at(monkeypatch: pytest.MonkeyPatch, out: Path, when: str, count: int = 1) -> None:
    """Make the ``count``-th removal in ``out`` (``when="remove"``) or rename of an index
    into it (``"index"``) raise :class:`_Killed`."""
    from sitemapkit.io import files

    seen = [0]
    real_replace, real_unlink = os.replace, Path.unlink

    def tick(path: object, kind: str) -> None:
        p = Path(str(path))
        if p.parent == out and kind == when and (kind == "remove" or "index" in p.name):
            seen[0] += 1
            if seen[0] == count:
                raise _Killed

    def replace(src: object, dst: object) -> None:
        tick(dst, "index")
        real_replace(src, dst)  # type: ignore[arg-type]

    def unlink(self: Path, missing_ok: bool = False) -> None:
        tick(self, "remove")
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(files.os, "replace", replace)
    monkeypatch.setattr(Path, "unlink", unlink)


def _killed_write(out: Path, n: int, **kw: object) -> None:
    with pytest.raises(_Killed):
        w = sk.SitemapWriter(out, base_url=BASE, max_urls=2, **kw)  # type: ignore[arg-type]
        for i in range(n):
            w.add(f"{BASE}new{i}")
        w._abort = lambda: None  # type: ignore[method-assign]  # a killed process cleans nothing
        w.close()
    from sitemapkit.io import files

    publisher = w._run._publisher  # type: ignore[union-attr]
    publisher._release()  # as the kill releases its locks and ends the process
    publisher._lock.close()
    files._LIVE.discard(publisher.staging)


def test_a_kill_after_the_index_leaves_the_new_set_and_the_next_run_removes_the_old(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with sk.SitemapWriter(out, base_url=BASE, max_urls=2) as w:
        for i in range(8):
            w.add(f"{BASE}old{i}")
    with monkeypatch.context() as m:
        _die_at(m, out, "remove", 2)  # the index is live, one old shard removed
        _killed_write(out, 4)
    left = sorted(os.listdir(out))
    assert len(left) == 3 + 3  # the new index and its 2 shards, 3 old shards not yet removed
    sk.SitemapWriter(out, base_url=BASE)  # the next run settles it
    assert len(os.listdir(out)) == 3
    only_the_set(out)
    assert staging(out) == []
    assert '"pending": null' in manifest_path(out, "sitemap").read_text()


def test_a_kill_between_several_indexes_is_rolled_forward(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2 sitemaps an index: 6 shards need 3 index files, moved in one by one
    with sk.SitemapWriter(out, base_url=BASE, max_urls=2, max_index_entries=2) as w:
        for i in range(12):
            w.add(f"{BASE}old{i}")
    with monkeypatch.context() as m:
        _die_at(m, out, "index", 2)  # the first index moved in, not the second
        _killed_write(out, 12, max_index_entries=2)
    sk.SitemapWriter(out, base_url=BASE, max_urls=2, max_index_entries=2)  # the next run
    indexes = sorted(p for p in out.iterdir() if "index" in p.name)
    got = [loc for i in indexes for p in _children(i) for loc in _locs(p)]
    assert sorted(got) == sorted(f"{BASE}new{i}" for i in range(12))  # the new set, whole
    assert len(os.listdir(out)) == 3 + 6
    assert staging(out) == []


def _children(index: Path) -> list[Path]:
    from .conftest import NS, parse

    return [
        index.parent / e.text.rsplit("/", 1)[-1]
        for e in parse(index).iterfind("s:sitemap/s:loc", NS)
    ]


def _locs(path: Path) -> list[str]:
    from .conftest import locs

    return locs(path)
