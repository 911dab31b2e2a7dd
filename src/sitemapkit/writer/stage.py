"""writer: a whole plain input file staged for an incremental run by two forked processes.

The input's lines are cut into ranges (:func:`.parallel.iter_ranges`, as the plain write
cuts them); each forked process formats its ranges and makes their entry lines,
fingerprints and sort keys (the incremental run's ``made``: the same staging as one
block at a time in this process); this process stages them in input order. Anything
that does not suit drops everything staged, and the caller adds the lines itself.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable
from typing import Final, cast

from ..core.serialize import EntryBlock
from ..errors import SitemapError
from ..io import child
from ..io.child import Child, ChildError
from ..io.sources import BLOCK, PlainFile, Progress
from ..io.state import StateStore, sort_keys
from .parallel import NotPlain, iter_ranges

__all__ = ["Made", "stage_plain_file"]

#: What the incremental run makes of a block (see ``StateStore.stage``): locs, entry
#: lines, fingerprints, content hashes (or None) and flags.
Made = tuple[list[bytes], list[bytes], list[bytes], list[bytes] | None, bytes]

_STAGE_LINES: Final = 1 << 14  # input lines a forked process stages at a time
#: What a forked process makes of a range: the input position of its first URL, the
#: entry lines, their sizes (``array("I")``), flags and sort keys (see ``stage_made``).
_StagedRange = tuple[int, bytes, bytes, bytes, bytes]


def stage_plain_file(
    state: StateStore,
    made: Callable[[EntryBlock], Made],
    source: PlainFile,
    progress: Progress | None = None,
) -> bool:
    """Stage ``source`` into ``state`` from two forked processes, ``made`` making each
    block's staging there; ``False``, nothing staged, when it does not suit (a state
    already staged into, fewer lines than two ranges, a range the formatter does not
    take, no fork, a process gone, an error)."""
    if state.count or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        return False
    try:
        ranges = list(iter_ranges(source.path, source.body_start, _STAGE_LINES))
    except NotPlain:
        return False
    if len(ranges) < 2:  # a small file: not worth two processes
        return False

    def handle(job: tuple[int, int, int]) -> _StagedRange | None:
        return _stage_range(made, source, *job)

    workers: list[Child] = []
    try:
        for _ in range(2):
            workers.append(Child.fork(handle, name="a staging process"))
        done = _drive(state, workers, ranges, progress)
    except (ChildError, SitemapError):  # ForkUnsafe, a process gone, an input error
        done = False
    finally:
        child.close_all(workers, grace=10)
    if not done:
        state.restart()
    return done


def _drive(
    state: StateStore,
    workers: list[Child],
    ranges: list[tuple[int, int, int]],
    progress: Progress | None,
) -> bool:
    """Hand the ranges to the workers, stage their results in input order."""
    jobs = iter(enumerate(ranges))
    busy: dict[Child, int] = {}
    results: dict[int, _StagedRange] = {}
    adopted = 0

    def hand(worker: Child) -> None:
        job = next(jobs, None)
        if job is not None:
            worker.send(job[1])
            busy[worker] = job[0]

    for worker in workers:
        hand(worker)
    while busy:
        for worker in child.ready(list(busy)):
            k = busy.pop(worker)
            res = cast("_StagedRange | None", worker.receive())
            if res is None:
                return False
            results[k] = res
            hand(worker)
        while adopted in results:
            state.stage_made(*results.pop(adopted))
            adopted += 1
            if progress:
                progress(state.count)
    return adopted == len(ranges)


def _stage_range(
    made: Callable[[EntryBlock], Made], source: PlainFile, start: int, end: int, line: int
) -> _StagedRange | None:
    """The staging of input bytes ``start:end`` (first line ``line``), made in a forked
    process; ``None`` if the formatter does not take all of it."""
    with open(source.path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    seq = line - 1
    entries: list[bytes] = []
    sizes = array("I")
    flags: list[bytes] = []
    keys: list[bytes] = []
    pos = 0
    while pos < len(data):
        if child.cancelled():
            return None
        cut = data.find(b"\n", min(len(data), pos + BLOCK)) + 1 or len(data)
        block = source.formatter.format(data[pos:cut])
        pos = cut
        if block is None:
            return None
        locs, lines, fps, contents, fl = made(block)
        keys.extend(sort_keys(locs, fps, contents, seq + len(sizes)))
        entries.extend(lines)
        sizes.extend(map(len, lines))
        flags.append(fl)
    keys.sort()  # sorted runs: the sort of them all (Timsort) then merges them
    return seq, b"".join(entries), sizes.tobytes(), b"".join(flags), b"".join(keys)
