"""io.fetch: the entry points, :func:`discover`, :func:`aiter_records` and their
synchronous twins :func:`discover_sync` and :func:`read_url_records`.

Each takes the keyword arguments of :class:`~sitemapkit.io.fetch.options.FetchKeywords`,
builds one :class:`~sitemapkit.io.fetch.options.FetchOptions` and runs a
:class:`~sitemapkit.io.fetch.runner.Runner`; records come out of a bounded queue, so when
the consumer falls behind, reading from the network pauses.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Sequence
from typing import Final, NamedTuple, Unpack

from ...core.discovery import DiscoveryFlow, SitemapTree
from ...core.parse import Record
from ..resource import AsyncCloseable, Closeable
from .hold import Batch
from .options import FetchKeywords, FetchOptions
from .runner import Runner

__all__ = [
    "RecordIterator",
    "RecordStream",
    "Sourced",
    "aiter_records",
    "discover",
    "discover_sync",
    "read_url_records",
]

_QUEUE: Final = 8  # record batches waiting for the consumer (backpressure beyond)


class Sourced(NamedTuple):
    """A record and the URL of the sitemap it was read from; unpacks as a pair."""

    record: Record
    source: str


_sourced = functools.partial(tuple.__new__, Sourced)


async def _batches(
    flow: DiscoveryFlow, opts: FetchOptions, keep: bool
) -> AsyncGenerator[Batch, None]:
    """Run a crawl; yield ``(sitemap_url, records)`` batches as they are parsed."""
    out: asyncio.Queue[Batch | None] | None = asyncio.Queue(_QUEUE) if keep else None
    runner = Runner(flow, opts, out)
    try:
        if out is None:
            await runner.run()
            return

        async def drive() -> None:
            try:
                await runner.run()
            except asyncio.CancelledError:
                raise  # the consumer stopped: nobody waits for the end mark (the queue may be full)
            except BaseException:
                await out.put(None)  # wake the consumer, which re-raises from `await driver`
                raise
            await out.put(None)

        driver = asyncio.create_task(drive())
        try:
            while True:
                item = await out.get()
                if item is None:
                    break
                yield item
            await driver
        finally:
            if not driver.done():
                driver.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await driver
    finally:
        await runner.aclose()


class RecordStream(AsyncCloseable):
    """The records of a crawl, as an async iterator of ``(record, sitemap_url)``.

    Records are :class:`~sitemapkit.Url` objects (from sitemaps, feeds and text
    sitemaps) in document order per sitemap; sitemaps read concurrently interleave. The
    entries of an index are followed, not yielded; with ``follow=False`` they are yielded
    as :class:`~sitemapkit.SitemapRef`. ``tree`` fills in as sitemaps finish and is
    complete when the iteration ends. Use ``async with`` (or ``aclose()``) when you may
    stop early, so that connections and worker processes are released at once.

    >>> async def main():                                  # doctest: +SKIP
    ...     async with aiter_records("https://example.com/") as stream:
    ...         async for record, source in stream:
    ...             print(record.loc)
    ...     print(len(stream.tree.sitemaps), "sitemaps")
    """

    def __init__(self, target: str, options: FetchOptions) -> None:
        flow = options.flow(target)
        self.tree: SitemapTree = flow.tree
        self._batches = _batches(flow, options, keep=True)
        self._batch: Sequence[Record] = []
        self._source = ""
        self._index = 0

    def __aiter__(self) -> RecordStream:
        return self

    async def __anext__(self) -> Sourced:
        while self._index >= len(self._batch):
            self._source, self._batch = await self._batches.__anext__()
            self._index = 0
        record = self._batch[self._index]
        self._index += 1
        return _sourced((record, self._source))

    def batches(self) -> AsyncIterator[Batch]:
        """The same records as ``(sitemap_url, [record, …])`` batches (less overhead);
        use either this or the stream itself."""
        return self._batches

    async def aclose(self) -> None:
        await self._batches.aclose()


class RecordIterator(Closeable):
    """:class:`RecordStream` for synchronous code: runs its own event loop.

    Iterate for ``(record, sitemap_url)``; ``tree`` is complete when the iteration ends.
    Must not be used from a thread that is running an event loop (use
    :func:`aiter_records` there). Close it (or use ``with``) when stopping early.
    """

    def __init__(self, target: str, options: FetchOptions) -> None:
        flow = options.flow(target)
        self.tree: SitemapTree = flow.tree
        self._batch_iter = self._batches(flow, options)
        self._iter = self._records(self._batch_iter)

    def batches(self) -> Iterator[Batch]:
        """The same records as ``(sitemap_url, [record, …])`` batches (less overhead);
        use either this or the iterator itself."""
        return self._batch_iter

    @staticmethod
    def _records(
        batches: Iterator[Batch],
    ) -> Generator[Sourced, None, None]:
        for source, records in batches:
            yield from map(_sourced, zip(records, itertools.repeat(source)))

    @staticmethod
    def _batches(flow: DiscoveryFlow, opts: FetchOptions) -> Generator[Batch, None, None]:
        loop = asyncio.new_event_loop()
        gen = _batches(flow, opts, keep=True)
        step: asyncio.Future[Batch] | None = None
        try:
            while True:
                step = asyncio.ensure_future(gen.__anext__(), loop=loop)
                try:
                    yield loop.run_until_complete(step)
                except StopAsyncIteration:
                    return
        finally:
            try:
                if step is not None and not step.done():
                    # interrupted (Ctrl-C) inside a step: end it first, or the generator
                    # is still running and cannot be closed
                    step.cancel()
                    with contextlib.suppress(BaseException):
                        loop.run_until_complete(step)
                loop.run_until_complete(gen.aclose())
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    def __iter__(self) -> RecordIterator:
        return self

    def __next__(self) -> Sourced:
        return next(self._iter)

    def close(self) -> None:
        self._iter.close()
        self._batch_iter.close()


async def discover(target: str, **options: Unpack[FetchKeywords]) -> SitemapTree:
    """Find and read every sitemap of a site (or below a sitemap URL); return the tree.

    ``target``: a site (``https://example.com/``, any URL whose path ends with ``/``: its
    origin's ``/robots.txt`` is read, then the well-known paths of
    :data:`~sitemapkit.core.discovery.PROBE_PATHS` are tried if it lists no sitemap), a
    robots.txt URL, or a sitemap URL. Every sitemap is fetched and parsed to the end; URL
    records are counted, not kept (use :func:`aiter_records` for them). Each sitemap is in
    ``tree.sitemaps`` with its HTTP status, size, entry count, findings, time and error.

    Budgets: ``max_depth`` (index nesting), ``max_sitemaps``, ``max_bytes`` (decompressed
    bytes over the crawl), ``max_document_bytes`` (per sitemap, enforced while streaming),
    ``max_redirects`` (per request), ``timeout`` (seconds to connect, to receive the
    headers, and between two reads of the body), ``max_document_time`` (seconds one
    document may take, retries included: a server that trickles a byte at a time resets
    ``timeout``, never this; the time spent waiting for the consumer of the records is left
    out) and ``max_time`` (seconds the crawl may take). Each budget that cuts the crawl is
    said: the sitemaps not requested are grouped in ``tree.unread`` (one SM012 finding per
    listing and budget, naming how many and the first, in ``report``), a document a
    deadline cut has the error in its status (SM012). ``retries`` on 429, 5xx and connection
    errors, waiting ``backoff`` × 2ⁿ seconds or the ``Retry-After`` (at most
    ``max_retry_after``). ``refuse_private=True`` refuses hosts that resolve to private,
    loopback or link-local addresses, for server-side use; off by default. ``cache_dir``
    turns on conditional requests. ``follow=False`` reads the sitemaps found directly but
    not the children of indexes. ``strict`` makes the parser stop at the first error
    finding. ``workers``: parser processes (``None``: one per core, up to 4, none on a
    single core; ``0``: parse in this process). ``client``: your own
    ``httpx.AsyncClient`` (not closed here; redirects are still followed by hand).
    ``report`` receives each sitemap's URL and findings as it finishes; ``progress``
    is called with a :class:`~sitemapkit.io.fetch.options.Progress` as the crawl goes (at
    least four times a second), for a progress line that says what the crawl waits for.

    Raises :class:`~sitemapkit.errors.InputError` for a target that is not an http(s)
    URL, ``ValueError`` for bad options; failures to fetch or read a sitemap are reported
    in the tree, not raised. (The keywords are the fields of
    :class:`~sitemapkit.io.fetch.options.FetchOptions`.)
    """
    opts = FetchOptions(**options)
    flow = opts.flow(target)
    async for _ in _batches(flow, opts, keep=False):
        pass  # pragma: no cover - nothing is kept
    return flow.tree


def aiter_records(target: str, **options: Unpack[FetchKeywords]) -> RecordStream:
    """Stream ``(record, sitemap_url)`` pairs of a crawl as they are parsed.

    Takes the keyword arguments of :func:`discover`. Memory stays bounded whatever the
    size of the tree: bodies are streamed into the parsers, and when the consumer falls
    behind, reading from the network pauses.
    """
    return RecordStream(target, FetchOptions(**options))


def read_url_records(target: str, **options: Unpack[FetchKeywords]) -> RecordIterator:
    """:func:`aiter_records` for synchronous scripts (no ``client`` option).

    >>> for record, source in read_url_records("https://example.com/"):  # doctest: +SKIP
    ...     print(record.loc)
    """
    if options.get("client") is not None:
        raise ValueError("read_url_records runs its own event loop; it cannot use a client")
    return RecordIterator(target, FetchOptions(**options))


def discover_sync(target: str, **options: Unpack[FetchKeywords]) -> SitemapTree:
    """:func:`discover` for synchronous scripts (takes the same keyword arguments)."""
    return asyncio.run(discover(target, **options))
