"""io.fetch: a body being read: parsed here, parsed in a worker, or kept (robots.txt).

The runner feeds decoded bytes to a :class:`Document` and closes it; records go to the
``emit`` callback in document order. Raw bytes go to a parser in slices of at most
:data:`SLICE` bytes: gzip inflates at most ~1,032:1, so a slice can never grow past ~16 MiB
in one call, and batches of records stay small.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Final

from ...core.finding import Finding
from ...core.parse import Kind, Record
from ...errors import SitemapError
from ..child import ChildError
from .worker import Abort, Close, Feed, Open, Parsed, ParserArgs, Worker

__all__ = ["SLICE", "Document", "Emit", "LocalDocument", "RemoteDocument", "RobotsBody"]

Emit = Callable[[Sequence[Record]], Awaitable[None]]

SLICE: Final = 16_384
_WINDOW: Final = 4  # feeds in flight per document in a worker


class Document:
    """A body being read; subclasses parse here or in a worker."""

    kind: Kind | None = None
    bytes_in = 0
    entries = 0
    findings: list[Finding]
    started = False

    def __init__(self) -> None:
        self.findings = []

    async def feed(self, data: bytes) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def abort(self) -> None:
        """Stop parsing after an error or a cancellation."""


def _slices(data: bytes) -> Iterator[bytes]:
    if len(data) <= SLICE:
        yield data
        return
    view = memoryview(data)
    for i in range(0, len(data), SLICE):
        yield bytes(view[i : i + SLICE])


class LocalDocument(Document):
    """A document parsed in this process."""

    def __init__(self, emit: Emit, args: ParserArgs) -> None:
        super().__init__()
        self._emit = emit
        self._parser = args.parser()
        self.findings = self._parser.findings

    def _sync(self) -> None:
        p = self._parser
        self.kind, self.bytes_in, self.entries = p.kind, p.bytes_in, p.entries

    async def feed(self, data: bytes) -> None:
        self.started = True
        parser = self._parser
        try:
            for piece in _slices(data):
                records = parser.feed(piece)
                if records:
                    self._sync()
                    await self._emit(records)
        finally:
            self._sync()

    async def close(self) -> None:
        try:
            records = self._parser.close()
        finally:
            self._sync()
        if records:
            await self._emit(records)


class RemoteDocument(Document):
    """A document parsed in a worker, with at most ``_WINDOW`` feeds unanswered."""

    def __init__(
        self, emit: Emit, worker: Worker, doc: int, args: ParserArgs, keep_urls: bool
    ) -> None:
        super().__init__()
        self._emit = emit
        self._worker = worker
        self._doc = doc
        self._inflight: deque[asyncio.Future[object]] = deque()
        self._failed = False
        self._released = False
        self._inflight.append(worker.send(Open(doc, args, keep_urls)))

    async def _settle(self, fut: asyncio.Future[object]) -> None:
        reply = await fut
        if reply is None or self._failed:
            return  # the worker no longer knows the document
        assert isinstance(reply, Parsed)
        self.kind, self.bytes_in, self.entries = reply.kind, reply.bytes_in, reply.entries
        if reply.findings is not None:
            self.findings = list(reply.findings)
        if reply.error is not None:
            self._failed = True
            raise reply.error.exception()
        if reply.records:
            await self._emit(reply.records)

    async def feed(self, data: bytes) -> None:
        self.started = True
        for piece in _slices(data):
            self._inflight.append(self._worker.send(Feed(self._doc, piece)))
            await self._worker.child.drain()
            while len(self._inflight) > _WINDOW:
                await self._settle(self._inflight.popleft())

    async def close(self) -> None:
        self._inflight.append(self._worker.send(Close(self._doc)))
        await self._worker.child.drain()
        try:
            while self._inflight:
                await self._settle(self._inflight.popleft())
        finally:
            self._release()

    def _release(self) -> None:
        if not self._released:
            self._released = True
            self._worker.docs -= 1

    async def abort(self) -> None:
        self._failed = True
        if not self._released and not self._worker.dead:
            self._inflight.append(self._worker.send(Abort(self._doc)))
        self._release()
        with contextlib.suppress(SitemapError, ChildError):
            while self._inflight:
                await self._inflight.popleft()


class RobotsBody(Document):
    """robots.txt, kept whole up to the size RFC 9309 obliges crawlers to read."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._limit = limit
        self.truncated = False

    async def feed(self, data: bytes) -> None:
        self.started = True
        room = self._limit - self.bytes_in
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        self._parts.append(data)
        self.bytes_in += len(data)

    async def close(self) -> None:
        pass

    @property
    def body(self) -> bytes:
        return b"".join(self._parts)
