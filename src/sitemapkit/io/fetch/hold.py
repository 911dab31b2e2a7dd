"""io.fetch: records read ahead of their turn, held until it comes, in bounded memory.

Records come out of a crawl in document order (children in the order their index lists
them) however the fetches overlap; the records of a document read ahead of its turn wait in
a :class:`Holder`. Up to :data:`HELD_RECORDS` records wait in memory; beyond that, batches
are pickled to a temporary file and read back when their turn comes. Pausing the read of a
later document instead would hold its connection, and the documents before it may need that
connection to end: a deadlock. A file costs disk, never progress.
"""

from __future__ import annotations

import asyncio
import pickle
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Final

from ...core.parse import Record

__all__ = ["HELD_RECORDS", "Batch", "Holder"]

Batch = tuple[str, Sequence[Record]]
#: Records held in memory (a few tens of MiB of rich records); beyond, they go to a file.
HELD_RECORDS: Final = 50_000


class _Spilled:
    """A batch written to the holder's file: where it starts and how long it is."""

    __slots__ = ("length", "offset", "size")

    def __init__(self, offset: int, length: int, size: int) -> None:
        self.offset = offset
        self.length = length
        self.size = size  # records in it


class Holder:
    """Hands batches to ``out`` in document order; ``blocked(order)`` says whether a
    document before ``order`` is still open (:meth:`DiscoveryFlow.blocked`)."""

    def __init__(
        self,
        out: asyncio.Queue[Batch | None],
        blocked: Callable[[tuple[int, ...]], bool],
        limit: int | None = None,
    ) -> None:
        self._out = out
        self._blocked = blocked
        self._limit = HELD_RECORDS if limit is None else limit
        self._held: dict[tuple[int, ...], list[Batch | _Spilled]] = {}
        self._releasing = asyncio.Lock()
        self._file: IO[bytes] | None = None
        self._spilled = 0  # batches in the file not read back yet
        #: Records held now, in memory and in the file; the most ever held in memory.
        self.records = 0
        self.in_memory = 0
        self.peak = 0

    async def put(self, order: tuple[int, ...], batch: Batch) -> None:
        """Hand ``batch`` out now, or hold it while a document before it is open or has
        batches held."""
        if self._blocked(order) or any(o <= order for o in self._held):
            self._held.setdefault(order, []).append(self._keep(batch))
            return
        await self._out.put(batch)

    def _keep(self, batch: Batch) -> Batch | _Spilled:
        size = len(batch[1])
        self.records += size
        if self.in_memory + size <= self._limit:
            self.in_memory += size
            self.peak = max(self.peak, self.in_memory)
            return batch
        if self._file is None:
            # closed by close(), when the crawl ends (it lives across many calls)
            self._file = tempfile.TemporaryFile(prefix="sitemapkit-held-")  # noqa: SIM115
        # a batch from a parser process pickles as columns (PlainUrls), ten times faster
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        offset = self._file.seek(0, 2)
        self._file.write(data)
        self._spilled += 1
        return _Spilled(offset, len(data), size)

    def _take(self, item: Batch | _Spilled) -> Batch:
        if not isinstance(item, _Spilled):
            self.in_memory -= len(item[1])
            self.records -= len(item[1])
            return item
        assert self._file is not None
        self._file.seek(item.offset)
        batch: Batch = pickle.loads(self._file.read(item.length))
        self.records -= item.size
        self._spilled -= 1
        if not self._spilled:
            self._file.truncate(0)  # every spilled batch is out: start the file again
        return batch

    async def release(self) -> None:
        """Hand out the held batches whose turn has come, in document order."""
        async with self._releasing:
            while self._held:
                order = min(self._held)
                if self._blocked(order):
                    return
                held = self._held[order]
                while held:  # batches added meanwhile join this list
                    await self._out.put(self._take(held.pop(0)))
                del self._held[order]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
