"""writer: one big plain input file written as whole shards by two forked processes.

Used for a fresh streaming run with count-bound shards: shard k then holds exactly
lines k*max_urls+1 ... of the input, as the sequential path would write them, so the
output is byte-identical to it. Each process has a pipe of its own and one job at a
time; the main process finds the ranges ahead while they work and adopts the shards in
order. Whenever the input does not suit (quotes, CR or blank lines in a range; the
byte limit binding; a worker dying) everything written is dropped and ``False`` tells
the caller to add the lines itself: nothing waits for ever, nothing is lost.

The processes are :meth:`sitemapkit.io.child.Child.fork` children: forked, not fresh
interpreters, because a fresh one costs 0.1–0.15 s of imports per worker on a run of
0.5–2 s, and forked ones inherit the settings, the formatter and the row function as they
are. Fork is sound because this process runs no other thread at that point (a fresh
writer has not started its background thread); the helper checks it, and refuses while
another thread runs, when the lines go to the sequential path. Framing, the round trip of
an input error (with every field), a worker's death (:class:`~sitemapkit.io.child.ChildGone`)
and the end of the workers (Ctrl-C included) are the helper's; :class:`_ForkPool` only
holds the two children, and the shard logic never touches them directly.
"""

from __future__ import annotations

import os
from array import array
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple, cast

from ..core.serialize import BlockFormatter
from ..core.split import fits
from ..errors import InputError, SitemapError
from ..io import child
from ..io.child import Child, ChildError, ForkUnsafe
from ..io.files import ShardFile
from ..io.sources import BLOCK, PlainFile, Progress, error_at
from .dedupe import Run, hash_run
from .index import Latest
from .settings import Settings
from .stream import StreamRun

__all__ = ["NotPlain", "iter_ranges", "write_forked"]

#: Results that may wait for an earlier shard to be adopted (each holds a hash run).
_AHEAD: Final = 4
#: Bytes the main process reads at a time to find the ranges.
_SCAN: Final = 1 << 20


class NotPlain(Exception):
    """The input cannot be cut at newlines into shards (see :func:`iter_ranges`)."""


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
    latest: str | None = None  # the latest lastmod of the shard's entries


#: What a job gives back: a shard, or why it gave up ("too-big": the byte limit would
#: cut the range; "not-plain"; "cancelled"). An error in the input is raised as an
#: :class:`~sitemapkit.errors.InputError`, which the child helper carries back.
Outcome = Done | str


@dataclass(frozen=True, slots=True)
class Context:
    """What every job of one input needs; inherited by the forked processes."""

    s: Settings
    source: PlainFile


def iter_ranges(path: str, body_start: int, per_shard: int) -> Iterator[tuple[int, int, int]]:
    """Byte ranges of ``per_shard`` lines each after ``body_start``, with first line numbers.

    Raises :class:`NotPlain` when the file does not end with a newline. Reads the file
    once, a MiB at a time into one buffer (not mmap: mapped pages would count as resident
    memory; a new bytes object a read would cost a page fault every 4 KiB), and only
    counts newlines: whether a range can be cut there (no quotes, CR or blank lines) is
    checked by the worker that writes it (:func:`write_range`).
    """
    start = body_start
    need = per_shard
    line = 1
    last = 10  # the byte before the body: a header line's newline
    buf = bytearray(_SCAN)
    with open(path, "rb", buffering=0) as fh:
        fh.seek(body_start)
        offset = body_start
        while size := fh.readinto(buf):
            c = buf.count(b"\n", 0, size)
            if c < need:
                need -= c
            else:
                pos = 0
                while c >= need:
                    # the need-th newline from pos, found in C
                    pos = size - len(buf[pos:size].split(b"\n", need)[need])
                    yield start, offset + pos, line
                    start = offset + pos
                    line += per_shard
                    c -= need
                    need = per_shard
                need -= c
            last = buf[size - 1]
            offset += size
    if last != 10 or offset <= body_start:
        raise NotPlain
    if start != offset:
        yield start, offset, line


def _rows(
    ctx: Context, block: bytes, line: int, latest: Latest
) -> tuple[list[bytes], array[int]] | str:
    """The entries of a block the formatter did not take, row by row (or why not).

    Their lastmods go into ``latest``.

    Raises :class:`~sitemapkit.errors.InputError` for a row the writer refuses.
    """
    if b'"' in block or b"\r" in block or b"\n\n" in block or block[:1] == b"\n":
        # a quoted field may hold a newline, a blank line is not a row: the ranges
        # may be cut wrongly, so the input is written by the sequential path
        return "not-plain"
    where = ctx.source.where
    try:
        part = block.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line + block[: exc.start].count(b"\n")
        why = f"input is not valid UTF-8: {exc.reason}"
        raise InputError(why, where=where, line=at, hint="convert the file to UTF-8") from None
    entries: list[bytes] = []
    hashes = array("q")
    for raw in part.split("\n")[:-1]:
        try:
            url = ctx.source.row(raw)
            entry, _, _, key = ctx.s.entry(url)
        except (ValueError, SitemapError) as exc:
            raise error_at(exc, where, line) from None
        if not ctx.s.txt and not isinstance(url, str) and url.lastmod is not None:
            latest.add(str(url.lastmod))
        entries.append(entry.encode())
        hashes.append(hash(key))
        line += 1
    return entries, hashes


def write_range(ctx: Context, job: Job) -> Outcome:
    """Write one whole shard from a byte range of the input (runs in a forked process).

    Stops between blocks once the main process ends the worker (closes its pipe).
    """
    if child.cancelled():
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
    latest = Latest()
    count = 0
    line = job.line
    pos = 0
    while pos < len(data):
        if child.cancelled():
            out.close()
            return "cancelled"
        cut = data.find(b"\n", min(len(data), pos + BLOCK)) + 1 or len(data)
        block = data[pos:cut]
        pos = cut
        res = fmt.format(block)
        if res is not None:
            out.write(res.data)
            hashes.extend(res.hashes)
            if res.lastmods is not None:
                latest.add_all(res.lastmods)
            count += res.entries
            line += res.entries
            continue
        try:
            rows = _rows(ctx, block, line, latest)
        except InputError:
            out.close()
            raise
        if isinstance(rows, str):
            out.close()
            return rows
        entries, more = rows
        out.write(b"".join(entries))
        hashes.extend(more)
        count += len(entries)
        line += len(entries)
    out.write(ctx.s.footer)
    out.close(sync=True)  # here, beside the other worker's work, not in the publish
    tail = len(ctx.s.footer)
    size = out.raw_bytes - len(head) - tail
    if not fits(ctx.s.limits, count=count, size=size, news=0, head=len(head), tail=tail):
        return "too-big"
    return Done(count, out.raw_bytes, out.stored_bytes, hash_run(hashes), latest.value)


class _ForkPool:
    """The two forked shard writers; a worker that dies shows as :class:`_WorkerDied`."""

    def __init__(self, s: Settings, source: PlainFile) -> None:
        ctx = Context(s, source)

        def handle(job: Job) -> Outcome:
            return write_range(ctx, job)  # looked up at each job (tests replace it)

        self.children: list[Child] = []
        try:
            for _ in range(2):
                self.children.append(Child.fork(handle, name="a shard writer process"))
        except BaseException:
            self.end()
            raise

    @staticmethod
    def usable() -> bool:
        return (os.cpu_count() or 1) >= 2 and hasattr(os, "fork")

    @staticmethod
    def send(worker: Child, job: Job) -> None:
        try:
            worker.send(job)
        except ChildError:  # it died after its last result
            raise _WorkerDied from None

    @staticmethod
    def ready(busy: list[Child], block: bool) -> list[Child]:
        """The workers with a result waiting (at once unless ``block``)."""
        return child.ready(busy, None if block else 0)

    @staticmethod
    def receive(worker: Child) -> Outcome:
        try:
            return cast(Outcome, worker.receive())
        except ChildError:  # killed, out of memory, a crash: the sequential path decides
            raise _WorkerDied from None

    def end(self) -> None:
        """End the shard writers: an idle one at once, a busy one at its next block.

        A result a worker is still sending (a hash run: more than a pipe holds) is read
        and dropped; one that outlasts 10 s is killed (its own pipe, no shared lock).
        """
        child.close_all(self.children, grace=10)


class _Forked:
    """One forked write: ranges planned ahead, handed out, adopted in order."""

    def __init__(self, run: StreamRun, source: PlainFile, progress: Progress | None) -> None:
        self.run = run
        self.source = source
        self.progress = progress
        self.ranges = iter_ranges(source.path, source.body_start, run.s.limits.urls)
        self.planned: deque[tuple[int, int, int]] = deque()
        self.exhausted = False
        self.jobs: list[Job] = []
        self.busy: dict[Child, int] = {}
        self.idle: list[Child] = []
        self.results: dict[int, Done] = {}
        self.adopted = self.done = 0

    def plan(self) -> None:
        """Find the next range (reads the file up to its end)."""
        found = next(self.ranges, None)
        if found is None:
            self.exhausted = True
        else:
            self.planned.append(found)

    def hand(self, pool: _ForkPool, worker: Child) -> None:
        """Give ``worker`` the next range, if any."""
        if len(self.results) >= _AHEAD:
            self.idle.append(worker)
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
        pool.send(worker, job)
        self.busy[worker] = k

    def take(self, k: int, res: Outcome) -> None:
        if not isinstance(res, Done):  # too-big, not-plain
            raise NotPlain
        self.results[k] = res
        # Shards are adopted in order as they come in, so that their hash runs go to
        # disk at once (10M URLs hold 80 MB of them).
        while self.adopted in self.results:
            done = self.results.pop(self.adopted)
            path = Path(self.jobs[self.adopted].target)
            self.run.adopt(path, done.entries, done.raw, done.stored, done.run, done.latest)
            self.adopted += 1
            self.done += done.entries
            if self.progress:
                self.progress(self.done)

    def drive(self, pool: _ForkPool) -> None:
        for worker in pool.children:
            self.hand(pool, worker)
        if len(self.jobs) < 2:
            raise NotPlain
        while self.busy:
            # while the workers are busy, the ranges ahead are found
            ready = pool.ready(list(self.busy), block=self.exhausted)
            if not ready:
                self.plan()
                continue
            for worker in ready:
                k = self.busy.pop(worker)
                self.take(k, pool.receive(worker))
                self.hand(pool, worker)
            while self.idle and len(self.results) < _AHEAD:
                self.hand(pool, self.idle.pop())


def write_forked(run: StreamRun, source: PlainFile, progress: Progress | None) -> bool:
    """Write ``source`` into the fresh ``run`` as whole shards; ``False`` if it does not suit."""
    if not _ForkPool.usable():
        return False
    forked = _Forked(run, source, progress)
    try:
        pool = _ForkPool(run.s, source)
    except ForkUnsafe:  # another thread runs: the lines go to the sequential path
        return False
    try:
        forked.drive(pool)
    except (NotPlain, _WorkerDied):
        pool.end()
        run.drop_adopted()
        for job in forked.jobs:
            Path(job.target).unlink(missing_ok=True)
        return False
    finally:
        pool.end()
    return True
