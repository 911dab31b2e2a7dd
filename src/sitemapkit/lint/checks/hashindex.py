"""lint.checks: which file of a set first listed a URL, in about 8 bytes a URL. Pure.

The duplicate checks across files (SM215, SM216 in :mod:`.duplicate`) and the hreflang
reciprocity check (HRE905 in :mod:`.set`) ask it by the URL's ``hash()``. Decides no rule.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable

__all__ = ["HashIndex"]


class HashIndex:
    """Which file of a set first listed a URL, by the URL's ``hash()``: about 8 bytes a
    URL (a sorted array of hashes per file) and a fixed bitmap that answers most
    lookups without searching them.

    >>> index = HashIndex()
    >>> index.add(0, [hash("a"), hash("b")])
    >>> index.add(1, [hash("b"), hash("c")])
    >>> index.get(hash("b")), index.get(hash("c")), index.get(hash("d")), len(index)
    (0, 1, None, 4)
    """

    def __init__(self) -> None:
        # at least 16 bits a hash (about 6 % of misses are searched), 2**25 at most (4 MiB)
        self._nbits = 1 << 16
        self._bits = bytearray(self._nbits >> 3)
        self._files: list[tuple[int, array[int]]] = []
        self._pending: list[tuple[int, array[int]]] = []  # sorted at the first lookup
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def add(self, file: int, hashes: Iterable[int]) -> None:
        """The hashes of one more file (those already in the index keep their file).

        Sorted only when the index is next asked: the last file of a set never is.
        """
        raw = array("q", hashes)
        if raw:
            self._pending.append((file, raw))
            self._count += len(raw)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        for file, raw in pending:
            self._take(file, array("q", sorted(set(raw))))

    def _take(self, file: int, ordered: array[int]) -> None:
        self._files.append((file, ordered))
        total = sum(len(o) for _, o in self._files)
        if total * 16 > self._nbits and self._nbits < 1 << 25:
            while total * 16 > self._nbits and self._nbits < 1 << 25:
                self._nbits <<= 2
            self._bits = bytearray(self._nbits >> 3)
            for _, earlier in self._files:
                self._mark(earlier)
        else:
            self._mark(ordered)

    def _mark(self, hashes: array[int]) -> None:
        bits, mask = self._bits, self._nbits - 1
        for h in hashes:
            i = h & mask
            bits[i >> 3] |= 1 << (i & 7)

    def get(self, h: int) -> int | None:
        """The first file that listed hash ``h``, or None."""
        if self._pending:
            self._flush()
        i = h & (self._nbits - 1)
        if not self._bits[i >> 3] & (1 << (i & 7)):
            return None
        for file, ordered in self._files:
            at = bisect_left(ordered, h)
            if at < len(ordered) and ordered[at] == h:
                return file
        return None

    def __contains__(self, h: object) -> bool:
        return isinstance(h, int) and self.get(h) is not None

    def isdisjoint(self, hashes: Iterable[int]) -> bool:
        """Whether none of ``hashes`` is in the index."""
        if self._pending:
            self._flush()
        bits, mask = self._bits, self._nbits - 1
        for h in hashes:
            i = h & mask
            if bits[i >> 3] & (1 << (i & 7)) and self.get(h) is not None:
                return False
        return True
