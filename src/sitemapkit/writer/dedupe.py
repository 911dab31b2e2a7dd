"""writer: exact duplicate removal without holding the URLs.

Each loc's 64-bit hash goes into an array that is sorted and spilled to the staging
folder in runs of 64 Ki hashes (8 bytes a URL on disk). At the end, hashes occurring
twice are found bucket by bucket (1/64 of the hash space at a time, C-level sorts);
only if there are any are the staged shards scanned, and every occurrence of a loc
after its first removed (locs compared as strings: a hash collision removes nothing).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable
from itertools import compress, islice
from operator import eq
from pathlib import Path
from typing import Final

from ..core.serialize import IMAGE, NEWS, VIDEO, XHTML
from ..core.urls import unescape
from ..io.files import ShardFile
from .settings import Settings

__all__ = ["HashRuns", "drop_duplicates", "hash_run"]

_RUN: Final = 1 << 16  # hashes per spilled run (512 KiB on disk)
_WHOLE: Final = 16 << 20  # a hash file up to this size (2 Mi URLs) is read whole at the end
# Spilled hashes are floats: 53 bits are plenty to find candidates (each one is then
# checked by string), and a list of floats sorts about twice as fast as one of ints.
_BOUNDS: Final = [float(-(1 << 63) + k * (1 << 58)) for k in range(1, 64)]  # 64 buckets
_NS_MARKERS: Final = (
    (XHTML, "<xhtml:link"),
    (IMAGE, "<image:image"),
    (VIDEO, "<video:video"),
    (NEWS, "<news:news"),
)

#: One spilled run: sorted hashes as bytes, and the offsets of its 64 buckets.
Run = tuple[bytes, list[int]]


def hash_run(hashes: array[int]) -> Run:
    """Sorted hashes as bytes and their bucket cuts: one run of the duplicate check."""
    run = sorted(map(float, hashes))
    return array("d", run).tobytes(), [0, *(bisect_left(run, b) for b in _BOUNDS), len(run)]


class HashRuns:
    """The hashes of every loc written, spilled in sorted runs to ``path``."""

    def __init__(self, path: Callable[[], Path]) -> None:
        self._path = path  # the staging folder is made when the first shard is
        self._hashes = array("q")
        self._runs: list[tuple[int, list[int]]] = []  # (file offset, bucket cuts) per run

    def __bool__(self) -> bool:
        return bool(self._runs) or bool(self._hashes)

    def pending(self) -> bool:
        """Hashes are held that no run holds yet."""
        return bool(self._hashes)

    def note(self, keys: list[str]) -> None:
        """Remember the hashes of these locs (as escaped in the file)."""
        self.extend(array("q", map(hash, keys)))

    def extend(self, hashes: array[int]) -> None:
        """Remember hashes computed here or in a forked process (same hash seed)."""
        self._hashes.extend(hashes)
        if len(self._hashes) >= _RUN:
            self._spill()

    def append(self, run: Run) -> None:
        """Add a run made elsewhere (:func:`hash_run`)."""
        data, cuts = run
        with open(self._path(), "ab") as fh:
            offset = fh.tell()
            fh.write(data)
        self._runs.append((offset, cuts))

    def clear(self) -> None:
        self._runs.clear()
        self._hashes = array("q")
        self._path().unlink(missing_ok=True)

    def _spill(self) -> None:
        """Sort the in-memory hashes and append them to the hash file as one run.

        The run's bucket boundaries (64 equal ranges of the hash space) are kept so
        that the end-of-run check can read one bucket of every run at a time.
        """
        self.append(hash_run(self._hashes))
        self._hashes = array("q")

    def repeated(self) -> set[float]:
        """Hashes that occur more than once among all locs written.

        Bucket by bucket: the bucket's slice of every sorted run is read; only a bucket
        that holds a repeat is sorted (the slices are already sorted runs, which timsort
        merges) and its equal neighbours kept, all in C. Memory: one bucket, about 1/64
        of the hashes.
        """
        if self._hashes:
            self._spill()
        if not self._runs:
            return set()
        # The runs' floats are read as their 64-bit patterns, equal exactly when the
        # floats are (no NaN, no -0.0 among them): a set of ints is built faster.
        repeated: set[int] = set()
        with open(self._path(), "rb") as fh:
            # up to _WHOLE bytes of hashes are read at once, not a bucket of a run at a time
            # (64 reads a run); beyond that, memory stays one bucket of every run
            end = max(offset + 8 * cuts[-1] for offset, cuts in self._runs)
            whole = memoryview(fh.read()) if end <= _WHOLE else None
            for b in range(len(_BOUNDS) + 1):
                part = array("q")
                for offset, cuts in self._runs:
                    lo, hi = cuts[b], cuts[b + 1]
                    if hi <= lo:
                        continue
                    if whole is not None:
                        part.frombytes(whole[offset + 8 * lo : offset + 8 * hi])
                    else:
                        fh.seek(offset + 8 * lo)
                        part.frombytes(fh.read(8 * (hi - lo)))
                # a set finds out whether the bucket repeats a hash, faster than sorting it
                if len(part) > 1 and len(set(part)) != len(part):
                    ordered = sorted(part)
                    repeated.update(compress(ordered, map(eq, ordered, islice(ordered, 1, None))))
        return set(array("d", array("q", repeated).tobytes()))


class _Pass:
    """One exact pass over the staged shards: the first occurrence of a loc stays."""

    def __init__(self, s: Settings, suspects: set[float], examples: list[str]) -> None:
        self.s = s
        self.txt = s.txt
        self.suspects = suspects
        self.examples = examples
        self.first: set[str] = set()
        # a text sitemap's locs are its lines; an entry line's loc is its first <loc>
        self.find_re = re.compile(r"^(.+)$" if self.txt else r"^<url><loc>([^<]*)</loc>", re.M)
        self.loc_re = re.compile(r"<loc>([^<]*)</loc>")

    def key(self, line: str) -> str:
        if self.txt:
            return line.rstrip("\n")
        m = self.loc_re.match(line, 5) if line.startswith("<url>") else None
        return m.group(1) if m else ""

    def shard(self, f: ShardFile) -> int:
        """Remove the repeats from one shard (rewriting it if any); return how many."""
        text = f.read_back().decode()
        suspects = self.suspects
        found = map(float, map(hash, self.find_re.findall(text)))
        if not any(map(suspects.__contains__, found)):
            return 0
        keep: list[str] = []
        removed = 0
        for line in text.splitlines(keepends=True):
            key = self.key(line)
            if key and float(hash(key)) in suspects:
                if key in self.first:
                    removed += 1
                    if len(self.examples) < 10:
                        self.examples.append(key if self.txt else unescape(key))
                    continue
                self.first.add(key)
            keep.append(line)
        if removed:
            self._rewrite(f, keep)
        return removed

    def _rewrite(self, f: ShardFile, keep: list[str]) -> None:
        if self.txt:
            body = "".join(keep)
        else:
            root = next(j for j, line in enumerate(keep) if line.startswith("<urlset"))
            body = "".join(keep[root + 1 :])
            ns = 0
            for flag, marker in _NS_MARKERS:
                if marker in body:
                    ns |= flag
            body = self.s.header(ns) + body
        # the worker thread has ended: this thread opens the file, and so owns it
        f.open()
        f.write(body.encode())
        f.close()


def drop_duplicates(
    s: Settings,
    stage: Callable[[str], Path],
    shards: list[ShardFile],
    counts: list[int],
    suspects: set[float],
    examples: list[str],
) -> tuple[list[ShardFile], list[int], int]:
    """The shards and their counts once repeats are removed, and how many were.

    Only shards holding a repeated hash are rewritten; shards left without entries
    are dropped and the rest renumbered in order.
    """
    one = _Pass(s, suspects, examples)
    kept = [c - one.shard(f) for f, c in zip(shards, counts, strict=True)]
    removed = sum(counts) - sum(kept)
    if 0 in kept and any(kept):
        out: list[ShardFile] = []
        out_counts: list[int] = []
        for f, c in zip(shards, kept, strict=True):
            if c == 0:
                f.path.unlink()
                continue
            new = stage(s.shard_name(len(out) + 1))
            if new != f.path:
                f.path.rename(new)
                f.path = new
            out.append(f)
            out_counts.append(c)
        return out, out_counts, removed
    return shards, kept, removed
