"""writer: the shards of a streaming run, cut where the next entry would not fit.

Every entry is one line (see ``core.serialize``), so a shard ends exactly where the
next entry would break a limit of :func:`sitemapkit.core.split.fits` (the real
header and closing tag counted). Memory stays flat: only the current shard's pending
lines (at most ``flush`` bytes, 1 MiB) are held; compression and writes run on the
worker thread, which owns each open :class:`~sitemapkit.io.files.ShardFile`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..core.serialize import EntryBlock
from ..core.split import fits
from ..errors import InputError
from ..io.files import ShardFile, Worker
from .index import Latest
from .settings import Settings

__all__ = ["Shards"]

_FLUSH: Final = 1 << 20


class _Current:
    __slots__ = (
        "count",
        "file",
        "head",
        "latest",
        "nbytes",
        "news",
        "ns",
        "pending",
        "pending_len",
    )

    def __init__(self, file: ShardFile, ns: int, head: bytes) -> None:
        self.file = file
        self.ns = ns
        self.head = len(head)
        self.count = 0
        self.news = 0
        self.nbytes = 0  # the entries' bytes, without header and footer
        self.pending: list[bytes] = [head]
        self.pending_len = 0
        self.latest = Latest()


def _too_big(size: int, max_bytes: int) -> InputError:
    return InputError(
        f"one entry is {size:,} bytes, more than fits in a sitemap of {max_bytes:,} bytes",
        hint="raise --max-bytes or shorten the entry",
    )


class Shards:
    """The staged shard files of a streaming run, in order, their entry counts and lastmods.

    ``latest[i]`` is the latest lastmod of shard ``i``'s entries (``None``: none has one).
    """

    def __init__(self, s: Settings, stage: Callable[[str], Path], *, flush: int = _FLUSH) -> None:
        self.s = s
        self._stage = stage
        self._flush_at = flush
        self._tail = len(s.footer)
        self.files: list[ShardFile] = []
        self.counts: list[int] = []
        self.latest: list[str | None] = []
        self._cur: _Current | None = None
        self._worker: Worker | None = None

    @property
    def writing(self) -> bool:
        """A shard is open (entries may still join it)."""
        return self._cur is not None

    def _fits(self, cur: _Current, head: int, size: int, count: int, news: int) -> bool:
        return fits(
            self.s.limits,
            count=cur.count + count,
            size=cur.nbytes + size,
            news=cur.news + news,
            head=head,
            tail=self._tail,
        )

    def put(self, data: bytes, ns: int, news: int, lastmod: str | None = None) -> None:
        """Add one entry line using the namespaces ``ns``; ``news``: 1 if it has news."""
        size = len(data)
        cur = self._cur
        head = 0
        if cur is not None:
            head = cur.head
            if ns & ~cur.ns:
                head = len(self.s.header(cur.ns | ns).encode())
        if cur is None or not self._fits(cur, head, size, 1, news):
            cur = self._open(ns)
            if not self._fits(cur, cur.head, size, 1, news):
                raise _too_big(size, self.s.limits.bytes)
        elif head != cur.head:
            self._widen(cur, ns)
        self._append(cur, data, size, 1)
        cur.news += news
        cur.latest.add(lastmod)

    def add_block(self, block: EntryBlock) -> None:
        """Add ready entry lines without extensions (the fast path), cut where they must be."""
        data, count = block.data, block.entries
        lastmods = block.lastmods
        done = 0  # entries of the block placed so far
        max_urls = self.s.limits.urls
        while count:
            cur = self._cur
            room = 0 if cur is None else max_urls - cur.count
            if room <= 0:  # no shard yet, or it is full: put() opens the next one
                cut = data.index(b"\n") + 1
                self.put(data[:cut], 0, 0, None if lastmods is None else lastmods[done].decode())
                data, count, done = data[cut:], count - 1, done + 1
                continue
            assert cur is not None
            if count > room:
                parts = data.split(b"\n", room)
                head, data = b"\n".join(parts[:room]) + b"\n", parts[room]
                taken = room
            else:
                head, data, taken = data, b"", count
            if self._fits(cur, cur.head, len(head), taken, 0):
                self._append(cur, head, len(head), taken)
                if lastmods is not None:
                    cur.latest.add_all(lastmods[done : done + taken])
            else:  # near the byte limit: place line by line
                for i, line in enumerate(head.splitlines(keepends=True)):
                    lm = None if lastmods is None else lastmods[done + i].decode()
                    self.put(line, 0, 0, lm)
            count -= taken
            done += taken

    def _append(self, cur: _Current, data: bytes, size: int, count: int) -> None:
        cur.pending.append(data)
        cur.pending_len += size
        cur.nbytes += size
        cur.count += count
        if cur.pending_len >= self._flush_at:
            self._flush(cur)

    def start(self) -> Worker:
        """The worker thread, started with the first shard."""
        if self._worker is None:
            self._worker = Worker()
        return self._worker

    def _open(self, ns: int) -> _Current:
        if self._cur is not None:
            self._close_current()
        worker = self.start()
        f = ShardFile(
            self._stage(self.s.shard_name(len(self.files) + 1)),
            gzip=self.s.gzip,
            level=self.s.gzip_level,
        )
        self.files.append(f)
        worker.submit(f.open)
        self._cur = _Current(f, ns, self.s.header(ns).encode())
        return self._cur

    def _flush(self, cur: _Current) -> None:
        if cur.pending:
            data = b"".join(cur.pending)
            cur.pending.clear()
            cur.pending_len = 0
            f = cur.file
            assert self._worker is not None
            self._worker.submit(lambda: f.write(data))

    def _widen(self, cur: _Current, ns: int) -> None:
        """A new extension namespace appeared mid-shard: rewrite it with a wider root tag."""
        assert self._worker is not None
        self._flush(cur)
        self._worker.submit(cur.file.close)
        self._worker.wait()
        body = cur.file.read_back()[cur.head :]
        cur.ns |= ns
        head = self.s.header(cur.ns).encode()
        self._worker.submit(cur.file.open)
        cur.head = len(head)
        cur.pending = [head, body]
        cur.pending_len = cur.head + len(body)

    def _close_current(self) -> None:
        cur = self._cur
        assert cur is not None and self._worker is not None
        cur.pending.append(self.s.footer)
        self._flush(cur)
        self._worker.submit(cur.file.close)
        self.counts.append(cur.count)
        self.latest.append(cur.latest.value)
        self._cur = None

    def finish(self) -> None:
        """Close the last shard (an empty input gets one, empty) and wait for the worker."""
        if self._cur is None and not self.files:
            # Empty input: a valid, empty urlset (XSD wants ≥ 1 url; Google reports
            # only "Empty sitemap", and allows empty news sitemaps).
            self._open(0)
        if self._cur is not None:
            self._close_current()
        self.stop(wait=True)

    def stop(self, *, wait: bool = False) -> None:
        if self._worker is not None:
            worker, self._worker = self._worker, None
            try:
                if wait:
                    worker.wait()
            finally:
                worker.stop()
