"""writer: a whole plain input file staged for an incremental run by two forked processes.

The input's lines are cut into ranges (:func:`.parallel.iter_ranges`, as the plain write
cuts them); each forked process formats its ranges and makes their entry lines,
fingerprints and sort keys (the incremental run's ``made``: the same staging as one
block at a time in this process); this process stages them in input order. Anything
that does not suit drops everything staged, and the caller adds the lines itself.

Each range's record (:class:`~sitemapkit.io.state.Range`: its input bytes' digest and
its locs' and fingerprints') goes to the state. A next run under the same key whose
ranges start at the same lines and hold as many is the last one again with some lines
rewritten: a range whose bytes are the same is copied from the state's cache and not
formatted, only the others go to the forked processes; if one of those has other locs or
fingerprints than it had, everything staged is dropped and staged anew, merged as usual
(see :mod:`sitemapkit.io.state`).
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Final, NamedTuple, cast

from ..core.serialize import EntryBlock
from ..errors import SitemapError
from ..io import child
from ..io.child import Child, ChildError
from ..io.sources import BLOCK, PlainFile, Progress
from ..io.state import Range, StateStore, part_name, sort_keys
from .parallel import NotPlain, iter_ranges

__all__ = ["Made", "stage_plain_file"]

#: What the incremental run makes of a block (see ``StateStore.stage``): locs, entry
#: lines, fingerprints, content hashes (or None) and flags.
Made = tuple[list[bytes], list[bytes], list[bytes], list[bytes] | None, bytes]

_STAGE_LINES: Final = 1 << 14  # input lines a forked process stages at a time


class _StagedRange(NamedTuple):
    """What a forked process makes of a range (see ``StateStore.stage_made``)."""

    seq: int  # the input position of its first URL
    part: str  # the file of its entry lines in the run folder (which it wrote)
    sizes: bytes  # of the entry lines, array("I")
    flags: bytes
    keys: bytes  # sort keys, joined
    digest: str  # of its input bytes (see Range)
    urls: str  # of its locs and fingerprints (see Range)
    size: int  # bytes of its entry lines


class _Changed(Exception):
    """A range that was to be the last run's again has other locs or fingerprints."""


def range_digest(data: bytes) -> str:
    """The digest of a range's input bytes (hex), as :class:`Range` records it."""
    return hashlib.sha256(data).hexdigest()


def stage_plain_file(
    state: StateStore,
    made: Callable[[EntryBlock], Made],
    source: PlainFile,
    progress: Progress | None = None,
    key: str | None = None,
) -> bool:
    """Stage ``source`` into ``state`` from two forked processes, ``made`` making each
    block's staging there; ``False``, nothing staged, when it does not suit (a state
    already staged into, fewer lines than two ranges, a range the formatter does not
    take, no fork, a process gone, an error).

    ``key`` names all that the entry lines and fingerprints depend on besides the input
    bytes: with one, the ranges are recorded for the next run, and the last run's are
    reused where they fit (see the module docstring); ``None``: neither."""
    if state.staged or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        return False
    try:
        ranges = list(iter_ranges(source.path, source.body_start, _STAGE_LINES))
    except NotPlain:
        return False
    if len(ranges) < 2:  # a small file: not worth two processes
        return False
    state.ranges_key = key
    old = state.cached(key) if key is not None else None
    same = _same_ranges(source.path, ranges, old) if old is not None else None

    folder = state.folder

    def handle(job: tuple[int, int, int, int]) -> _StagedRange | None:
        start, end, line, k = job
        return _stage_range(made, source, start, end, line, folder, k)

    if same is not None:
        assert old is not None
        try:
            state.reuse()
            return _staged(state, handle, ranges, progress, old, same)
        except _Changed:
            state.restart()  # then staged anew and merged
    return _staged(state, handle, ranges, progress)


def _staged(
    state: StateStore,
    handle: Callable[[tuple[int, int, int, int]], _StagedRange | None],
    ranges: list[tuple[int, int, int]],
    progress: Progress | None,
    old: list[Range] | None = None,
    same: set[int] | None = None,
) -> bool:
    """Stage ``ranges`` by two forked processes (one for one range to make, none when the
    cache gives them all: see :func:`_drive`); ``False``, nothing staged, when it does
    not suit."""
    workers: list[Child] = []
    try:
        for _ in range(min(2, len(ranges) - len(same or ()))):  # none: all from the cache
            workers.append(Child.fork(handle, name="a staging process"))
        done = _drive(state, workers, ranges, progress, old, same)
    except (ChildError, SitemapError):  # ForkUnsafe, a process gone, an input error
        done = False
    finally:
        child.close_all(workers, grace=10)
    if not done:
        state.restart()
    return done


def _same_ranges(
    path: str, ranges: list[tuple[int, int, int]], old: list[Range]
) -> set[int] | None:
    """The ranges whose bytes are the ones the last run staged (``old``), by number;
    ``None`` unless every range starts at the same line and holds as many lines."""
    if len(ranges) != len(old):
        return None
    same = set()
    with open(path, "rb") as fh:
        for k, ((start, end, line), rec) in enumerate(zip(ranges, old, strict=True)):
            fh.seek(start)
            data = fh.read(end - start)
            if line != rec.line or data.count(b"\n") != rec.lines:
                return None
            if range_digest(data) == rec.digest:
                same.add(k)
    return same


def _drive(
    state: StateStore,
    workers: list[Child],
    ranges: list[tuple[int, int, int]],
    progress: Progress | None,
    old: list[Range] | None = None,
    same: set[int] | None = None,
) -> bool:
    """Hand the ranges to the workers, stage their results in input order; with ``old``
    (the last run's ranges) and ``same`` (those whose bytes did not change), stage those
    from the cache and the others made anew, raising :class:`_Changed` if one of them
    has other locs or fingerprints than it had."""
    jobs = iter([(k, (*r, k)) for k, r in enumerate(ranges) if not same or k not in same])
    busy: dict[Child, int] = {}
    results: dict[int, _StagedRange] = {}
    adopted = 0

    def hand(worker: Child) -> None:
        job = next(jobs, None)
        if job is not None:
            worker.send(job[1])
            busy[worker] = job[0]

    def adopt() -> None:
        nonlocal adopted
        while adopted < len(ranges):
            if same is not None and adopted in same:
                assert old is not None
                state.stage_cached(adopted, old[adopted])
            elif adopted in results:
                r = results.pop(adopted)
                record = Range(ranges[adopted][2], len(r.flags), r.size, r.digest, r.urls)
                state.stage_made(r.seq, r.part, r.sizes, r.flags, r.keys, record)
            else:
                return
            adopted += 1
            if progress:
                progress(state.count)

    for worker in workers:
        hand(worker)
    adopt()
    while busy:
        for worker in child.ready(list(busy)):
            k = busy.pop(worker)
            res = cast("_StagedRange | None", worker.receive())
            if res is None:
                return False
            if old is not None and res.urls != old[k].urls:
                raise _Changed
            results[k] = res
            hand(worker)
        adopt()
    return adopted == len(ranges)


def _stage_range(
    made: Callable[[EntryBlock], Made],
    source: PlainFile,
    start: int,
    end: int,
    line: int,
    folder: Path,
    k: int,
) -> _StagedRange | None:
    """The staging of input bytes ``start:end`` (first line ``line``, range ``k``), made
    in a forked process, which writes the entry lines to the run ``folder``; ``None`` if
    the formatter does not take all of it."""
    with open(source.path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    seq = line - 1
    # each loc, fingerprint and content hash after the last, whatever the blocks
    loc_digest, fp_digest, content_digest = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    sizes = array("I")
    flags: list[bytes] = []
    keys: list[bytes] = []
    part = part_name(k)
    with open(folder / part, "wb") as out:
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
            loc_digest.update(b"\n".join(locs) + b"\n")
            fp_digest.update(b"".join(fps))  # hex of one width
            if contents is not None:
                content_digest.update(b"\n".join(contents) + b"\n")
            keys.extend(sort_keys(locs, fps, contents, seq + len(sizes)))
            out.write(block.data)  # the lines, joined
            sizes.extend(map(len, lines))
            flags.append(fl)
        size = out.tell()
    keys.sort()  # sorted runs: the sort of them all (Timsort) then merges them
    urls = b"".join(d.digest() for d in (loc_digest, fp_digest, content_digest))
    return _StagedRange(
        seq,
        part,
        sizes.tobytes(),
        b"".join(flags),
        b"".join(keys),
        range_digest(data),
        range_digest(urls),
        size,
    )
