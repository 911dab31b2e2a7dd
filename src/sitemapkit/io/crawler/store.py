"""io.crawler: a crawl's state in bounded memory: the seen set and the frontier.

A million pages, each with its URL in the seen set and many queued at once, must not hold
a million strings: :class:`SeenSet` keeps 8 bytes a URL (the URL's 64-bit ``hash()`` in
sorted arrays; two URLs of one crawl share a hash with odds of about 1 in 10^7 at a
million URLs, and then the second is taken as seen), and :class:`SpillFrontier` keeps at
most ``limit`` queued URLs in memory and the rest in a temporary file, still first in,
first out.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from bisect import bisect_left
from collections import deque
from typing import IO, Final

__all__ = ["FRONTIER_LIMIT", "SeenSet", "SpillFrontier"]

#: URLs a frontier keeps in memory before it spills to disk (a few MiB of strings).
FRONTIER_LIMIT: Final = 20_000
_RECENT: Final = 65_536  # hashes held in a set before they are sorted into a run
_RUNS: Final = 8  # sorted runs before they are merged into one


class SeenSet:
    """The URLs a crawl has judged, by hash: about 8 bytes a URL.

    >>> seen = SeenSet()
    >>> seen.add("https://example.com/a"), seen.add("https://example.com/a"), len(seen)
    (True, False, 1)
    """

    def __init__(self, recent: int = _RECENT) -> None:
        self._recent: set[int] = set()
        self._limit = recent
        self._runs: list[array[int]] = []
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, url: str) -> bool:
        return self._has(hash(url))

    def _has(self, h: int) -> bool:
        if h in self._recent:
            return True
        for run in self._runs:
            i = bisect_left(run, h)
            if i < len(run) and run[i] == h:
                return True
        return False

    def add(self, url: str) -> bool:
        """Add ``url``; true if it was not seen before."""
        h = hash(url)
        if self._has(h):
            return False
        self._recent.add(h)
        self._count += 1
        if len(self._recent) >= self._limit:
            self._runs.append(array("q", sorted(self._recent)))
            self._recent = set()
            if len(self._runs) > _RUNS:
                merged = array("q", sorted(h for run in self._runs for h in run))
                self._runs = [merged]
        return True


class SpillFrontier:
    """A first-in, first-out queue of ``(url, depth)`` that keeps at most ``limit`` in
    memory; the rest waits in a temporary file (removed by :meth:`close`).

    >>> q = SpillFrontier(limit=1)
    >>> q.push("https://example.com/a", 0); q.push("https://example.com/b", None)
    >>> q.pop(), q.pop(), q.pop(), q.spilled
    (('https://example.com/a', 0), ('https://example.com/b', None), None, 1)
    >>> q.close()
    """

    def __init__(self, limit: int = FRONTIER_LIMIT, directory: str | None = None) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._limit = limit
        self._dir = directory
        self._head: deque[tuple[str, int | None]] = deque()
        self._file: IO[str] | None = None
        self._on_disk = 0  # lines in the file not read back yet
        self._read_at = 0
        self._write_at = 0
        self.spilled = 0  # how many entries went through the file, in all

    def __len__(self) -> int:
        return len(self._head) + self._on_disk

    def push(self, url: str, depth: int | None) -> None:
        if self._on_disk == 0 and len(self._head) < self._limit:
            self._head.append((url, depth))
            return
        file = self._file
        if file is None:
            fd, path = tempfile.mkstemp(prefix="sitemapkit-frontier-", dir=self._dir)
            os.unlink(path)  # gone with the process, whatever happens to it
            file = self._file = os.fdopen(fd, "w+", encoding="utf-8", newline="\n")
        file.seek(self._write_at)
        # a URL in comparison form has no white space: one line, the depth first
        file.write(f"{'' if depth is None else depth} {url}\n")
        self._write_at = file.tell()
        self._on_disk += 1
        self.spilled += 1

    def pop(self) -> tuple[str, int | None] | None:
        if not self._head and self._on_disk:
            self._refill()
        return self._head.popleft() if self._head else None

    def _refill(self) -> None:
        file = self._file
        assert file is not None
        file.seek(self._read_at)
        while self._on_disk and len(self._head) < self._limit:
            depth, _, url = file.readline().rstrip("\n").partition(" ")
            self._head.append((url, int(depth) if depth else None))
            self._on_disk -= 1
        self._read_at = file.tell()
        if not self._on_disk:  # read to the end: start the file again
            file.seek(0)
            file.truncate()
            self._read_at = self._write_at = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
