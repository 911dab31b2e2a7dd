"""Incremental runs keep the live file of an unchanged shard (``Publisher.keep``), stage
a whole plain input in forked processes and write the shards in forked processes: each
must give what the plain way gives."""

from __future__ import annotations

import gzip
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ..drill import BASE, Run, csv_text, kill_at_every_step, only_the_set, staging, which

N, MAX_URLS = 2_000, 600  # 4 shards


def _sets() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A, and B: A with a new lastmod on 50 URLs of its last shard only."""
    a = [(f"{BASE}item/{i}", "2024-01-01") for i in range(N)]
    b = [(loc, "2024-03-03" if i >= N - 50 else lm) for i, (loc, lm) in enumerate(a)]
    return a, b


def _published(state: Path) -> dict[int, str]:
    db = sqlite3.connect(state)
    try:
        return dict(db.execute("SELECT n, name FROM published"))
    finally:
        db.close()


def _files(out: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}


def test_unchanged_shards_keep_their_files_and_a_changed_one_is_written(tmp_path: Path) -> None:
    a, b = _sets()
    (tmp_path / "a.csv").write_text(csv_text(a))
    (tmp_path / "b.csv").write_text(csv_text(b))
    run = Run(tmp_path / "out", MAX_URLS, state=tmp_path / "s.sqlite")
    assert run.write(tmp_path / "a.csv").returncode == 0
    shards = [f"sitemap-{n}.xml.gz" for n in (1, 2, 3, 4)]
    assert _published(tmp_path / "s.sqlite") == dict(enumerate(shards, 1))
    for name in shards:
        os.utime(run.out / name, ns=(1_000_000_000, 1_000_000_000))
    before = _files(run.out)
    again = run.write(tmp_path / "a.csv")
    assert "rewritten: nothing" in again.stdout
    assert _files(run.out) == before  # every file: name, bytes, mtime
    done = run.write(tmp_path / "b.csv")
    assert done.returncode == 0, done.stderr
    after = _files(run.out)
    for name in shards[:3]:
        assert after[name] == before[name]
    (fourth,) = (n for n in after if n.startswith("sitemap-4-"))
    assert f"rewritten: {fourth}" in done.stdout
    assert which(run.out, {"A": a, "B": b}) == "B"
    assert _published(tmp_path / "s.sqlite")[4] == fourth
    only_the_set(run.out)


def test_a_live_file_that_is_not_what_the_state_recorded_is_written_again(
    tmp_path: Path,
) -> None:
    a, _ = _sets()
    (tmp_path / "a.csv").write_text(csv_text(a))
    run = Run(tmp_path / "out", MAX_URLS, state=tmp_path / "s.sqlite")
    assert run.write(tmp_path / "a.csv").returncode == 0
    spoilt = run.out / "sitemap-2.xml.gz"
    good = spoilt.read_bytes()
    spoilt.write_bytes(gzip.compress(gzip.decompress(good).replace(b"item/7", b"item/x")))
    (run.out / "sitemap-3.xml.gz").unlink()
    done = run.write(tmp_path / "a.csv")
    assert done.returncode == 0, done.stderr
    # no entry changed, but the edited and the deleted shard are staged again and published
    # under names the live index does not use: the folder shows A again, and the summary
    # names both files it wrote (and no other)
    assert "0 added, 0 changed, 0 removed, 2,000 unchanged" in done.stdout
    two, three = (
        next(n for n in os.listdir(run.out) if n.startswith(f"sitemap-{k}-")) for k in (2, 3)
    )
    assert done.stdout.rstrip().endswith(f"rewritten: {two}, {three}")
    assert which(run.out, {"A": a}) == "A"
    only_the_set(run.out)
    again = run.write(tmp_path / "a.csv")
    assert "rewritten: nothing" in again.stdout


def test_a_kill_at_any_step_then_a_run_of_the_old_input_keeps_no_file_of_the_new(
    tmp_path: Path,
) -> None:
    """Killed after B's index went live but before its state was recorded, the state still
    says A: a run of A then must not keep B's file of the shard that changed."""
    a, b = _sets()
    named = {"A": a, "B": b}
    src_a, src_b = tmp_path / "a.csv", tmp_path / "b.csv"
    src_a.write_text(csv_text(a))
    src_b.write_text(csv_text(b))
    run = Run(tmp_path / "out", MAX_URLS, state=tmp_path / "s.sqlite")
    assert run.write(src_a).returncode == 0
    seen: list[str] = []

    def then_a_and_b(step: int, shown: str) -> None:
        seen.append(shown)
        for src, name in ((src_a, "A"), (src_b, "B"), (src_a, "A")):
            done = run.write(src)
            assert done.returncode == 0, (step, done.stderr)
            assert which(run.out, named) == name, step
            only_the_set(run.out)
            assert staging(run.out) == []

    kills = kill_at_every_step(run, src_b, named, after=then_a_and_b)
    assert len(kills) >= 5
    assert set(seen) == {"A", "B"}  # killed before the index and after it
    assert which(run.out, named) == "B"


def _cli(args: list[str], stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
    src = Path(__file__).resolve().parents[2] / "src"
    env = dict(os.environ, PYTHONPATH=str(src))
    with open(stdin or os.devnull, "rb") as fh:
        done = subprocess.run(
            [sys.executable, "-m", "sitemapkit", *args],
            stdin=fh,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    return done


def _url_file(state: Path) -> tuple[bytes, int]:
    db = sqlite3.connect(state)
    try:
        (name,) = db.execute("SELECT value FROM meta WHERE key='urls'").fetchone()
    finally:
        db.close()
    # each line without its change time (the runs' clocks differ), and how many differ
    lines = (state.parent / name).read_bytes().splitlines()
    times = [line.rsplit(b"\t", 1)[1] for line in lines]
    return b"\n".join(line.rsplit(b"\t", 1)[0] for line in lines), len(set(times))


def test_a_file_staged_by_forked_processes_is_staged_as_its_lines_would_be(
    tmp_path: Path,
) -> None:
    # over two ranges of lines (the forked path); a repeated loc, one without a lastmod
    # column value would not be plain, so the second file has a quoted field far in
    rows = [f"{BASE}p/{i}?a=1&b={i % 7},2024-01-{1 + i % 28:02d}\n" for i in range(40_000)]
    rows[30_000] = rows[12]  # a repeated loc (the first stays)
    plain = tmp_path / "plain.csv"
    plain.write_text("loc,lastmod\n" + "".join(rows))
    quoted = tmp_path / "quoted.csv"
    rows[35_000] = f'"{BASE}q/1",2024-02-02\n'
    quoted.write_text("loc,lastmod\n" + "".join(rows))
    for k, src in enumerate((plain, quoted, plain)):
        if k:  # change times are whole seconds: each path's runs in seconds of their own
            time.sleep(1.05)
        outs = []
        for how in ("file", "stdin"):
            out, state = tmp_path / f"{how}-out", tmp_path / f"{how}.sqlite"
            args = ["write", "-o", str(out), "--base-url", BASE, "--state", str(state)]
            done = _cli([*args, str(src)] if how == "file" else [*args, "-"], src)
            (said,) = (x for x in done.stdout.splitlines() if x.startswith("changes since"))
            outs.append((_files(out), _url_file(state), said))
        (files, urls, said), (files2, urls2, said2) = outs
        assert {n: d for n, (d, _) in files.items()} == {n: d for n, (d, _) in files2.items()}
        assert urls == urls2, k
        assert said == said2


#: A run of ``write`` in which every shard written is logged (``main`` or ``child``, the
#: process and the shard numbers); ``how``: ``forked`` as it is, ``in-process`` with
#: another thread running (so no fork), ``kill`` with the shard writer of shard 3 killed
#: half-way through its file, ``full`` with that writer meeting a full disk, ``interrupt``
#: with each writer waiting in its first shard until it is ended (logged ``waiting``; what
#: it writes after that is logged too).
_SPY = """
import errno, os, signal, threading, time, zlib
from sitemapkit.cli.main import main
from sitemapkit.io import child, files
from sitemapkit.writer import incremental
signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the test runner set
MAIN, how, log, waited = os.getpid(), {how!r}, {log!r}, []
if how == "in-process":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
write_files = incremental.IncrementalRun._write_files
def logged(self, numbers, *a, **k):
    with open(log, "a") as fh:
        fh.write(f"{{'main' if os.getpid() == MAIN else 'child'}} {{os.getpid()}} {{numbers}}\\n")
    return write_files(self, numbers, *a, **k)
incremental.IncrementalRun._write_files = logged
def third(path):
    return os.getpid() != MAIN and os.path.basename(path).startswith("sitemap-3.")
def full(path, *a, **k):  # the open() of files.ShardFile.open
    if how == "full" and third(path):
        raise OSError(errno.ENOSPC, "No space left on device")
    return open(path, *a, **k)
shard_write = files.ShardFile.write
def wrote(self, data):
    shard_write(self, data)
    if how == "kill" and third(self.path) and len(data) > 1000:
        self._fh.write(self._z.flush(zlib.Z_SYNC_FLUSH))  # what it has deflated, on disk
        self._fh.flush()
        with open(log, "a") as fh:
            fh.write(f"killed {{self.path.stat().st_size}}\\n")
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "interrupt" and os.getpid() != MAIN and len(data) > 1000:
        with open(log, "a") as fh:
            fh.write("wrote after the end\\n" if waited else "waiting\\n")
        while not waited and not child.cancelled():
            time.sleep(0.01)
        waited.append(True)
files.open, files.ShardFile.write = full, wrote
main({argv!r})
"""


def _spied(run: Run, src: Path, how: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    log = run.out.parent / f"{run.out.name}.log"
    log.unlink(missing_ok=True)
    code = _SPY.format(how=how, log=str(log), argv=run.argv(src))
    done = subprocess.run(
        [sys.executable, "-c", code], env=run.env(), capture_output=True, text=True, check=False
    )
    return done, log.read_text().splitlines() if log.exists() else []


def _state(state: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    db = sqlite3.connect(state)
    try:
        shards = db.execute("SELECT n, digest, changed FROM shards ORDER BY n").fetchall()
        files = db.execute("SELECT n, name, digest, how FROM published ORDER BY n").fetchall()
    finally:
        db.close()
    return shards, files


def _writes(log: list[str]) -> list[tuple[str, int, str]]:
    """The log's shard writes: (main or child, process id, the shard numbers)."""
    return [(x.split(" ", 2)[0], int(x.split(" ", 2)[1]), x.split(" ", 2)[2]) for x in log]


def test_shards_written_by_forked_processes_are_the_bytes_written_here(tmp_path: Path) -> None:
    a, _ = _sets()
    src = tmp_path / "a.csv"
    src.write_text(csv_text(a))
    got: dict[str, tuple[dict[str, bytes], object]] = {}
    for how in ("forked", "in-process", "kill"):
        run = Run(tmp_path / how, 300, state=tmp_path / f"{how}.sqlite")
        done, log = _spied(run, src, how)
        assert done.returncode == 0, done.stderr
        files = {n: data for n, (data, _) in _files(run.out).items()}
        got[how] = (files, _state(tmp_path / f"{how}.sqlite"))
        if how == "forked":  # 7 shards: every other one by each of two processes
            writes = _writes(log)
            assert sorted((who, nums) for who, _, nums in writes) == [
                ("child", "[1, 3, 5, 7]"),
                ("child", "[2, 4, 6]"),
            ]
            assert len({pid for _, pid, _ in writes}) == 2
        elif how == "in-process":  # a thread runs: no fork
            assert [(who, nums) for who, _, nums in _writes(log)] == [
                ("main", "[1, 2, 3, 4, 5, 6, 7]")
            ]
        else:  # the process writing 1, 3, 5, 7 died in 3: they are written here again
            (killed,) = (x for x in log if x.startswith("killed "))
            assert int(killed.split()[1]) > 100  # it left a file half-written
            writes = _writes([x for x in log if x != killed])
            assert (writes[-1][0], writes[-1][2]) == ("main", "[1, 3, 5, 7]")
    assert len(got["forked"][0]) == 8  # 7 shards and the index
    assert got["forked"] == got["in-process"]
    assert got["kill"] == got["forked"]


def _a_then_b(tmp_path: Path) -> tuple[Run, Path, dict[str, list[tuple[str, str]]]]:
    """A written with a state (7 shards), and the file of B to write over it: A with
    every lastmod changed (so every shard is written); the sets by name."""
    a, _ = _sets()
    named = {"A": a, "B": [(loc, "2024-05-05") for loc, _ in a]}
    for name, entries in named.items():
        (tmp_path / f"{name}.csv").write_text(csv_text(entries))
    run = Run(tmp_path / "out", 300, state=tmp_path / "s.sqlite")
    assert run.write(tmp_path / "A.csv").returncode == 0
    return run, tmp_path / "B.csv", named


def test_a_shard_writer_meeting_a_full_disk_fails_the_run_and_publishes_nothing(
    tmp_path: Path,
) -> None:
    run, src_b, named = _a_then_b(tmp_path)
    before, state = _files(run.out), _state(tmp_path / "s.sqlite")
    done, log = _spied(run, src_b, "full")
    assert done.returncode == 1
    assert [x[0] for x in _writes(log)] == ["child", "child"]
    assert done.stderr.startswith(
        "sitemapkit: error: could not write sitemap-3.xml.gz: No space left on device; "
        "nothing was published, the earlier sitemaps are as they were"
    ), done.stderr
    assert _files(run.out) == before
    assert _state(tmp_path / "s.sqlite") == state
    assert staging(run.out) == []
    again = run.write(src_b)
    assert again.returncode == 0, again.stderr
    assert which(run.out, named) == "B"
    only_the_set(run.out)


def test_ctrl_c_while_the_shard_writers_work_ends_them_and_publishes_nothing(
    tmp_path: Path,
) -> None:
    run, src_b, named = _a_then_b(tmp_path)
    before, state = _files(run.out), _state(tmp_path / "s.sqlite")
    log = tmp_path / "out.log"
    code = _SPY.format(how="interrupt", log=str(log), argv=run.argv(src_b))
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=run.env(),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        while not (log.exists() and log.read_text().count("waiting") == 2):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole process group
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "sitemapkit: aborted" in err
    assert "wrote after" not in log.read_text()  # each stopped at once
    for _ in range(500):  # the writers are gone too (reaped by the run before it exited)
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("a shard writer process outlived the run")
    assert _files(run.out) == before
    assert which(run.out, named) == "A"
    assert _state(tmp_path / "s.sqlite") == state
    assert staging(run.out) == []
