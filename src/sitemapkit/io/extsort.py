"""io: external sort of byte lines in bounded memory (sorted runs on disk + k-way merge).

Lines are buffered until ``max_bytes`` (payload plus the per-object overhead of a ``bytes``
in a list) is reached, sorted with ``list.sort`` (C speed), and written to a run file in
``directory``. The sorted result is a lazy ``heapq.merge`` of the runs, each read through a
64 KiB buffer; when there are more than ``fan_in`` runs they are first merged in groups
into longer runs, so neither open files nor buffers grow with the input. Input that fits
in one run never touches the disk.

Lines sort as bytes, so UTF-8 text sorts by code point. Every line must end with ``\\n``
and hold no other ``\\n``; the caller owns ``directory`` and removes it.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Final

__all__ = ["DEFAULT_MAX_BYTES", "ExternalSorter", "merge_runs"]

#: Memory budget of one sorted run (payload + object overhead).
DEFAULT_MAX_BYTES: Final = 16 << 20
_OVERHEAD: Final = 41  # sys.getsizeof(b"") == 33, plus the list slot
_FAN_IN: Final = 64
_BUFFER: Final = 1 << 16


class ExternalSorter:
    """Sort an unbounded stream of lines with a bounded amount of memory.

    >>> import tempfile
    >>> s = ExternalSorter(tempfile.mkdtemp(), max_bytes=100)
    >>> s.extend([b"b\\n", b"c\\n", b"a\\n"] * 10)
    >>> list(s.sorted())[:4]
    [b'a\\n', b'a\\n', b'a\\n', b'a\\n']
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        fan_in: int = _FAN_IN,
        prefix: str = "run",
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, not {max_bytes}")
        if fan_in < 2:
            raise ValueError(f"fan_in must be at least 2, not {fan_in}")
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.fan_in = fan_in
        self.prefix = prefix
        self.lines = 0
        self._buf: list[bytes] = []
        self._size = 0
        self._runs: list[Path] = []
        self._made = 0
        self._done = False

    @property
    def runs(self) -> int:
        """How many runs were spilled to disk so far."""
        return len(self._runs)

    def add(self, line: bytes) -> None:
        self._buf.append(line)
        self._size += len(line) + _OVERHEAD
        self.lines += 1
        if self._size >= self.max_bytes:
            self._spill()

    def extend(self, lines: Iterable[bytes]) -> None:
        """Add many lines; faster than calling :meth:`add` for each (a list that fits
        in the budget is taken at once)."""
        buf = self._buf
        size = self._size
        limit = self.max_bytes
        if isinstance(lines, list):
            more = sum(map(len, lines)) + _OVERHEAD * len(lines)
            if size + more < limit:
                buf.extend(lines)
                self._size = size + more
                self.lines += len(lines)
                return
        n = 0
        for line in lines:
            buf.append(line)
            size += len(line) + _OVERHEAD
            n += 1
            if size >= limit:
                self._size = size
                self.lines += n
                n = 0
                self._spill()
                buf = self._buf
                size = 0
        self._size = size
        self.lines += n

    def sorted(self) -> Iterator[bytes]:
        """Every line added, in byte order. Call once, after the last :meth:`add`."""
        if not self._runs and not self._done:
            self._done = True
            buf, self._buf, self._size = self._buf, [], 0
            buf.sort()
            return iter(buf)
        return merge_runs(self.finish(), fan_in=self.fan_in)

    def finish(self) -> list[Path]:
        """Write what is left to disk and return the run files (each sorted), for another
        process to merge with :func:`merge_runs`. Ends the sorter like :meth:`sorted`."""
        self._check_done()
        if self._buf or not self._runs:
            self._spill()
        runs, self._runs = self._runs, []
        return runs

    def _check_done(self) -> None:
        if self._done:
            raise RuntimeError("the sorted lines were already taken")
        self._done = True

    def _new_path(self) -> Path:
        self._made += 1
        return self.directory / f"{self.prefix}-{self._made:06d}"

    def _spill(self) -> None:
        buf, self._buf, self._size = self._buf, [], 0
        buf.sort()
        path = self._new_path()
        with open(path, "wb", buffering=_BUFFER) as out:
            out.writelines(buf)
        self._runs.append(path)


def merge_runs(runs: list[Path], *, fan_in: int = _FAN_IN) -> Iterator[bytes]:
    """The lines of sorted run files in byte order; each file is deleted once read.

    More than ``fan_in`` runs are first merged in groups into longer runs (beside them),
    so at most ``fan_in`` files are open at a time.
    """
    runs = list(runs)
    made = 0
    while len(runs) > fan_in:
        group, runs = runs[:fan_in], runs[fan_in:]
        made += 1
        path = group[0].with_name(f"{group[0].name}.m{made}")
        with open(path, "wb", buffering=_BUFFER) as out:
            out.writelines(_merge(group))
        runs.append(path)
    return _merge(runs)


def _lines(path: Path) -> Iterator[bytes]:
    fh: BinaryIO
    with open(path, "rb", buffering=_BUFFER) as fh:
        yield from fh
    path.unlink()


def _merge(paths: list[Path]) -> Iterator[bytes]:
    if len(paths) == 1:
        return _lines(paths[0])
    return heapq.merge(*(_lines(p) for p in paths))
