"""writer: the public :class:`SitemapWriter`, a façade over one mode chosen once.

Without a state file a :class:`~.stream.StreamRun` writes shards as URLs come in;
with one an :class:`~.incremental.IncrementalRun` stages them and writes at the end.
Both share one :class:`~.settings.Settings`, the split rule (``core.split.fits``), the
index and the publish step; the writer itself only resolves locs and builds records.
"""

from __future__ import annotations

import datetime as dt
import errno
import sys
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal, cast

from ..core import limits
from ..core.model import Alternate, Url
from ..core.serialize import EntryBlock
from ..errors import SitemapError
from ..io.files import sweep, write_error
from ..io.resource import Closeable
from ..io.sources import PlainFile, Progress
from . import parallel
from .result import WriteResult
from .settings import Check, settings
from .stream import StreamRun

if TYPE_CHECKING:
    from .incremental import IncrementalRun

__all__ = ["SitemapWriter"]

#: Errors of a write that only the output can meet (the disk or a file-size limit).
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class SitemapWriter(Closeable):
    """Write sitemaps of any size into ``directory``, published atomically on close.

    ``base_url`` is the URL at which ``directory`` is served. A loc given as a string
    may be relative: it is resolved against ``base_url`` first (:meth:`resolve`), and
    then must be what :class:`~sitemapkit.Url` takes, an absolute URL (a ``Url`` never
    holds a relative one). With ``check_location`` (default) every loc must lie under
    ``base_url`` (sitemaps.org "Sitemap file location"). Use as a context manager: an
    exception inside the block publishes nothing and leaves earlier files intact.
    ``check``, if given, is called with each staged file before anything is published; an
    error finding it returns refuses the publish (``InputError``). With ``state`` (a file)
    runs are incremental: URLs keep their shard and lastmod is the time a page changed.

    >>> import tempfile, sitemapkit as sk
    >>> out = tempfile.mkdtemp()
    >>> with sk.SitemapWriter(out, base_url="https://example.com/") as w:
    ...     w.add(sk.Url("https://example.com/a", lastmod="2024-05-01"))
    ...     w.add_alternates({"en": "https://example.com/en", "de": "https://example.com/de"})
    >>> [f.name for f in w.result.files], w.result.urls
    (['sitemap.xml'], 3)
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        base_url: str,
        gzip: bool = False,
        max_urls: int = limits.MAX_URLS,
        max_bytes: int = limits.MAX_BYTES,
        max_news: int = limits.MAX_NEWS,
        max_index_entries: int = limits.MAX_SITEMAPS,
        index: Literal["auto", "always", "never"] = "auto",
        format: Literal["xml", "txt"] = "xml",
        stylesheet: str | None = None,
        name: str = "sitemap",
        keep_deprecated: bool = False,
        check_location: bool = True,
        gzip_level: int | None = None,
        state: str | Path | None = None,
        content_from: str | Path | None = None,
        now: dt.datetime | None = None,
        check: Check | None = None,
    ) -> None:
        s = settings(
            directory,
            base_url=base_url,
            gzip=gzip,
            max_urls=max_urls,
            max_bytes=max_bytes,
            max_news=max_news,
            max_index_entries=max_index_entries,
            index=index,
            format=format,
            stylesheet=stylesheet,
            name=name,
            keep_deprecated=keep_deprecated,
            check_location=check_location,
            gzip_level=gzip_level,
            content_from=content_from,
            now=now,
            check=check,
        )
        self._s = s
        self.directory = s.directory
        self.base_url = s.base_url
        self.format = s.format
        self.gzip = s.gzip
        self.result = WriteResult(s.directory)
        # every run, whatever comes of it, first clears what killed runs left beside it
        sweep(s.directory, s.name)
        self._stream: StreamRun | None = None
        self._run: StreamRun | IncrementalRun
        if state is None:
            self._run = self._stream = StreamRun(s, self.result)
        else:
            import sqlite3

            from .incremental import IncrementalRun  # SQLite, imported for a --state run

            try:
                self._run = IncrementalRun(s, self.result, state)
            except sqlite3.Error as exc:
                raise _state_error(exc) from exc
        self._closed = False

    @property
    def incremental(self) -> bool:
        """Whether this run uses a state file."""
        return self._stream is None

    def add(self, url: Url | str, *, content_hash: str | None = None) -> None:
        """Add one URL. A string is taken as a loc and may be relative to ``base_url``.

        A loc that repeats an earlier one is dropped (the first occurrence stays where
        it was) and counted in ``result.duplicates``. ``content_hash`` (any string that
        changes when the page changes) is used with a state file: a URL given without
        lastmod then gets the time its content hash last changed.
        """
        self._run.add(url, content_hash)

    def add_block(self, block: EntryBlock) -> None:
        """Add entry lines that :class:`sitemapkit.core.serialize.BlockFormatter` made.

        They go into the shards exactly as :meth:`add` would put the same URLs (the
        fast path of plain inputs), with a state file too.
        """
        self._run.add_block(block)

    def add_plain_file(self, source: PlainFile, *, progress: Progress | None = None) -> bool:
        """Write a big plain input file as whole shards formatted in forked processes.

        Only into a fresh streaming writer, and only when the file can be cut at
        newlines into shards of ``max_urls`` lines: then the output is byte-identical
        to adding its lines in order. ``False`` (nothing added) when it does not suit;
        the caller then adds the lines itself. With a state file the lines are staged
        in forked processes instead (:meth:`.IncrementalRun.add_plain_file`).
        """
        if self._stream is None:
            return cast("IncrementalRun", self._run).add_plain_file(source, progress)
        if not self._stream.fresh:
            return False
        return parallel.write_forked(self._stream, source, progress)

    def add_alternates(
        self,
        versions: Mapping[str, str | Url],
        *,
        x_default: str | Url | None = None,
    ) -> None:
        """Add a cluster of language versions of one page (hreflang).

        Every member's ``<url>`` lists all members, itself included, and the
        ``x-default`` page when given (which is added as a member too unless it is
        one of the versions already). A ``Url`` value keeps its other fields.
        """
        url = self._s.url
        members = [(lang, url(page)) for lang, page in versions.items()]
        links = [Alternate(lang, u.loc) for lang, u in members]
        if x_default is not None:
            xd = url(x_default)
            links.append(Alternate("x-default", xd.loc))
            if all(u.loc != xd.loc for _, u in members):
                members.append(("x-default", xd))
        seen: set[str] = set()
        for _, u in members:
            if u.loc in seen:
                continue
            seen.add(u.loc)
            self.add(
                Url(
                    u.loc,
                    u.lastmod,
                    u.changefreq,
                    u.priority,
                    u.images,
                    u.videos,
                    u.news,
                    tuple(links),
                )
            )

    def resolve(self, loc: str) -> str:
        """Resolve a possibly relative loc against ``base_url`` (and turn it into a URI)."""
        return self._s.resolve(loc)

    def close(self) -> WriteResult:
        """Finish every file, write the index, publish; return :attr:`result`."""
        if self._closed:
            return self.result
        self._closed = True
        try:
            self._run.finish()
        except OSError as exc:
            self._abort()
            raise write_error(exc) from exc
        except BaseException as exc:
            self._abort()
            if _is_state_error(exc):
                raise _state_error(exc) from exc
            raise
        return self.result

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        super().__exit__(exc_type, exc, tb)
        # a full disk met while the block ran (a spill file, a shard): said, not a traceback
        if isinstance(exc, OSError) and exc.errno in _FULL:
            raise write_error(exc) from exc
        if exc is not None and _is_state_error(exc) and self.incremental:
            raise _state_error(exc) from exc

    def _abort(self) -> None:
        self._run.abort()

    def _close_after_error(self) -> None:
        # a block that failed publishes nothing: the staged files go, the target stays
        self._closed = True
        self._abort()


def _is_state_error(exc: BaseException) -> bool:
    """True for an error of the state's SQLite (imported only by a ``--state`` run)."""
    sqlite3 = sys.modules.get("sqlite3")
    return sqlite3 is not None and isinstance(exc, sqlite3.Error)


def _state_error(exc: BaseException) -> SitemapError:
    return SitemapError(
        f"could not use the state file: {exc}; nothing was published, the earlier "
        "sitemaps are as they were",
        hint="check the free space and the file-size limit (ulimit -f) of its file system, "
        "and that it is writable",
    )
