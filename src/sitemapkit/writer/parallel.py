"""writer: one big plain input file written as whole shards by two forked processes.

Used for a fresh streaming run with count-bound shards: shard k then holds exactly
lines k*max_urls+1 ... of the input, as the sequential path would write them, so the
output is byte-identical to it. Each process has a pipe of its own and one job at a
time; the main process finds the ranges ahead while they work and adopts the shards in
order. Whenever the input does not suit (quotes, CR or blank lines in a range; the
byte limit binding; a worker dying) everything written is dropped and ``False`` tells
the caller to add the lines itself: nothing waits for ever, nothing is lost.

The process mechanism is :class:`_ForkPool` alone (fork, pipes, a cancel event, the
end of the workers); the shard logic never touches it directly.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import time
from array import array
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Final, NamedTuple, cast

from ..core.serialize import BlockFormatter
from ..core.split import fits
from ..errors import InputError, SitemapError
from ..io.files import ShardFile
from ..io.sources import BLOCK, PlainFile, Progress, error_at
from .dedupe import Run, hash_run
from .settings import Settings
from .stream import StreamRun

__all__ = ["write_forked"]

#: Results that may wait for an earlier shard to be adopted (each holds a hash run).
_AHEAD: Final = 4


class _NotPlain(Exception):
    """The input cannot be cut at newlines into shards (see :func:`_iter_ranges`)."""


class _WorkerDied(Exception):
    """A shard writer process ended without a result (killed, out of memory, a crash)."""


class Job(NamedTuple):
    """Write input bytes ``start:end`` (first line ``line``) as shard ``k`` at ``target``."""

    k: int
    start: int
    end: int
    line: int
    target: str


class Done(NamedTuple):
    entries: int
    raw: int
    stored: int
    run: Run


class Failed(NamedTuple):
    message: str
    line: int
    field: str | None
    hint: str | None


#: What a job gives back: a shard, an error in the input, or why it gave up
#: ("too-big": the byte limit would cut the range; "not-plain"; "cancelled").
Outcome = Done | Failed | str


@dataclass(frozen=True, slots=True)
class Context:
    """What every job of one input needs; inherited by the forked processes."""

    s: Settings
    source: PlainFile
    cancel: Event


def _iter_ranges(path: str, body_start: int, per_shard: int) -> Iterator[tuple[int, int, int]]:
    """Byte ranges of ``per_shard`` lines each after ``body_start``, with first line numbers.

    Raises :class:`_NotPlain` when the file does not end with a newline. Reads the file
    once, a MiB at a time (not mmap: mapped pages would count as resident memory), and
    only counts newlines: whether a range can be cut there (no quotes, CR or blank
    lines) is checked by the worker that writes it (:func:`write_range`).
    """
    start = body_start
    need = per_shard
    line = 1
    prev = b"\n"
    with open(path, "rb") as fh:
        fh.seek(body_start)
        offset = body_start
        while chunk := fh.read(1 << 20):
            c = chunk.count(b"\n")
            if c < need:
                need -= c
            else:
                pos = 0
                while c >= need:
                    # the need-th newline from pos, found in C
                    pos = len(chunk) - len(chunk[pos:].split(b"\n", need)[need])
                    yield start, offset + pos, line
                    start = offset + pos
                    line += per_shard
                    c -= need
                    need = per_shard
                need -= c
            prev = chunk[-1:]
            offset += len(chunk)
    if prev != b"\n" or offset <= body_start:
        raise _NotPlain
    if start != offset:
        yield start, offset, line


def _rows(ctx: Context, block: bytes, line: int) -> tuple[list[bytes], array[int]] | Failed | str:
    """The entries of a block the formatter did not take, row by row (or why not)."""
    if b'"' in block or b"\r" in block or b"\n\n" in block or block[:1] == b"\n":
        # a quoted field may hold a newline, a blank line is not a row: the ranges
        # may be cut wrongly, so the input is written by the sequential path
        return "not-plain"
    try:
        part = block.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line + block[: exc.start].count(b"\n")
        why = f"input is not valid UTF-8: {exc.reason}"
        return Failed(why, at, None, "convert the file to UTF-8")
    entries: list[bytes] = []
    hashes = array("q")
    for raw in part.split("\n")[:-1]:
        try:
            entry, _, _, key = ctx.s.entry(ctx.source.row(raw))
        except (ValueError, SitemapError) as exc:
            err = error_at(exc, ctx.source.where, line)
            return Failed(err.message, line, err.field, err.hint)
        entries.append(entry.encode())
        hashes.append(hash(key))
        line += 1
    return entries, hashes


def write_range(ctx: Context, job: Job) -> Outcome:
    """Write one whole shard from a byte range of the input (runs in a forked process).

    Stops between blocks once the main process has set the cancel event.
    """
    if ctx.cancel.is_set():
        return "cancelled"
    with open(ctx.source.path, "rb") as fh:
        fh.seek(job.start)
        data = fh.read(job.end - job.start)
    fmt: BlockFormatter = ctx.source.formatter
    out = ShardFile(Path(job.target), gzip=ctx.s.gzip, level=ctx.s.gzip_level)
    head = ctx.s.header(0).encode()
    out.open()
    out.write(head)
    hashes = array("q")
    count = 0
    line = job.line
    pos = 0
    while pos < len(data):
        if ctx.cancel.is_set():
            out.close()
            return "cancelled"
        cut = data.find(b"\n", min(len(data), pos + BLOCK)) + 1 or len(data)
        block = data[pos:cut]
        pos = cut
        res = fmt.format(block)
        if res is not None:
            out.write(res.data)
            hashes.extend(res.hashes)
            count += res.entries
            line += res.entries
            continue
        rows = _rows(ctx, block, line)
        if isinstance(rows, str | Failed):
            out.close()
            return rows
        entries, more = rows
        out.write(b"".join(entries))
        hashes.extend(more)
        count += len(entries)
        line += len(entries)
    out.write(ctx.s.footer)
    out.close()
    tail = len(ctx.s.footer)
    size = out.raw_bytes - len(head) - tail
    if not fits(ctx.s.limits, count=count, size=size, news=0, head=len(head), tail=tail):
        return "too-big"
    return Done(count, out.raw_bytes, out.stored_bytes, hash_run(hashes))


def _serve(conn: Connection, ctx: Context) -> None:
    """A shard writer process: jobs in, results out, until ``None`` or the pipe ends.

    Ctrl-C reaches the whole process group: the main process alone handles it (it sets
    the cancel event and ends the workers).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(write_range(ctx, job))


class _ForkPool:
    """Two forked processes, each on a pipe of its own; ended at once by :meth:`end`.

    The whole process mechanism: jobs are sent to a worker's connection, results come
    back on it; a worker that dies shows as :class:`_WorkerDied`.
    """

    def __init__(self, s: Settings, source: PlainFile) -> None:
        forking = mp.get_context("fork")
        self.cancel = forking.Event()
        # forked, not spawned: the context (settings, formatter, row function) is
        # inherited as it is, nothing is pickled
        ctx = Context(s, source, self.cancel)
        self.workers: list[tuple[BaseProcess, Connection]] = []
        for _ in range(2):
            mine, theirs = forking.Pipe()
            proc = forking.Process(target=_serve, args=(theirs, ctx), daemon=True)
            proc.start()
            theirs.close()
            self.workers.append((proc, mine))
        self.conns = [conn for _, conn in self.workers]

    @staticmethod
    def usable() -> bool:
        return (os.cpu_count() or 1) >= 2 and "fork" in mp.get_all_start_methods()

    @staticmethod
    def send(conn: Connection, job: Job) -> None:
        conn.send(job)

    @staticmethod
    def ready(busy: list[Connection], block: bool) -> list[Connection]:
        """The connections with a result waiting (at once unless ``block``)."""
        return [cast(Connection, c) for c in wait(busy, None if block else 0)]

    @staticmethod
    def receive(conn: Connection) -> Outcome:
        try:
            return cast(Outcome, conn.recv())
        except EOFError:
            raise _WorkerDied from None

    def end(self) -> None:
        """End the shard writers: an idle one at once, a busy one at its next block."""
        self.cancel.set()
        for _, conn in self.workers:
            if not conn.closed:
                with contextlib.suppress(OSError):
                    conn.send(None)
        deadline = time.monotonic() + 10
        for proc, conn in self.workers:
            # a result it is sending (a hash run: more than a pipe holds) is read and dropped
            while proc.is_alive() and not conn.closed and time.monotonic() < deadline:
                try:
                    if conn.poll(0.05):
                        conn.recv()
                except (EOFError, OSError):
                    break
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():  # its own pipe and no shared lock: safe to kill
                proc.kill()
                proc.join()
            conn.close()


class _Forked:
    """One forked write: ranges planned ahead, handed out, adopted in order."""

    def __init__(self, run: StreamRun, source: PlainFile, progress: Progress | None) -> None:
        self.run = run
        self.source = source
        self.progress = progress
        self.ranges = _iter_ranges(source.path, source.body_start, run.s.limits.urls)
        self.planned: deque[tuple[int, int, int]] = deque()
        self.exhausted = False
        self.jobs: list[Job] = []
        self.busy: dict[Connection, int] = {}
        self.idle: list[Connection] = []
        self.results: dict[int, Done] = {}
        self.adopted = self.done = 0

    def plan(self) -> None:
        """Find the next range (reads the file up to its end)."""
        found = next(self.ranges, None)
        if found is None:
            self.exhausted = True
        else:
            self.planned.append(found)

    def hand(self, pool: _ForkPool, conn: Connection) -> None:
        """Give ``conn`` the next range, if any."""
        if len(self.results) >= _AHEAD:
            self.idle.append(conn)
            return
        if not self.planned and not self.exhausted:
            self.plan()
        if not self.planned:
            return
        s, e, line = self.planned.popleft()
        k = len(self.jobs)
        first = line + (self.source.body_start > 0)
        job = Job(k, s, e, first, str(self.run.stage(self.run.s.shard_name(k + 1))))
        self.jobs.append(job)
        pool.send(conn, job)
        self.busy[conn] = k

    def take(self, k: int, res: Outcome) -> None:
        if isinstance(res, Failed):
            raise InputError(
                res.message, where=self.source.where, line=res.line, field=res.field, hint=res.hint
            )
        if not isinstance(res, Done):  # too-big, not-plain
            raise _NotPlain
        self.results[k] = res
        # Shards are adopted in order as they come in, so that their hash runs go to
        # disk at once (10M URLs hold 80 MB of them).
        while self.adopted in self.results:
            done = self.results.pop(self.adopted)
            path = Path(self.jobs[self.adopted].target)
            self.run.adopt(path, done.entries, done.raw, done.stored, done.run)
            self.adopted += 1
            self.done += done.entries
            if self.progress:
                self.progress(self.done)

    def drive(self, pool: _ForkPool) -> None:
        for conn in pool.conns:
            self.hand(pool, conn)
        if len(self.jobs) < 2:
            raise _NotPlain
        while self.busy:
            # while the workers are busy, the ranges ahead are found
            ready = pool.ready(list(self.busy), block=self.exhausted)
            if not ready:
                self.plan()
                continue
            for conn in ready:
                k = self.busy.pop(conn)
                self.take(k, pool.receive(conn))
                self.hand(pool, conn)
            while self.idle and len(self.results) < _AHEAD:
                self.hand(pool, self.idle.pop())


def write_forked(run: StreamRun, source: PlainFile, progress: Progress | None) -> bool:
    """Write ``source`` into the fresh ``run`` as whole shards; ``False`` if it does not suit."""
    if not _ForkPool.usable():
        return False
    forked = _Forked(run, source, progress)
    pool = _ForkPool(run.s, source)
    try:
        forked.drive(pool)
    except (_NotPlain, _WorkerDied):
        pool.end()
        run.drop_adopted()
        for job in forked.jobs:
            Path(job.target).unlink(missing_ok=True)
        return False
    finally:
        pool.end()
    return True
