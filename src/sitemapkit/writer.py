"""The streaming writer: URLs in, published sitemaps (and an index) out.

Memory stays flat: only the current shard's pending lines (≤ 1 MiB) are held.
Every entry is one line (see ``core.serialize``), so a shard is cut exactly where
the next entry would break the URL count, the byte size (the real closing tag
counted) or the news count.

Duplicates are found exactly without holding the URLs: each loc's 64-bit hash
goes into an array that is sorted and spilled to the staging folder in runs of
64 Ki hashes (8 bytes a URL on disk). At the end, hashes occurring twice are
found bucket by bucket (1/64 of the hash space at a time, C-level sorts); only
if there are any are the staged shards scanned, and every occurrence of a loc
after its first removed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress, islice
from operator import eq
from pathlib import Path
from types import TracebackType
from typing import Final, Literal

from .core import limits
from .core.finding import Finding
from .core.model import Alternate, SitemapRef, Url
from .core.serialize import (
    IMAGE,
    NEWS,
    VIDEO,
    XHTML,
    footer,
    header,
    sitemap_entry,
    url_entry,
)
from .core.urls import (
    XML_SPACE,
    Origin,
    check_location,
    escape,
    iri_to_uri,
    is_canonical_loc,
    resolve,
    unescape,
)
from .core.w3cdate import format_lastmod
from .errors import InputError
from .io.files import Publisher, ShardFile, Worker
from .io.state import StateStore

__all__ = ["FileInfo", "SitemapWriter", "WriteResult"]

_FLUSH: Final = 1 << 20
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_RUN: Final = 1 << 16  # hashes per spilled run (512 KiB on disk)
# Spilled hashes are floats: 53 bits are plenty to find candidates (each one is then
# checked by string), and a list of floats sorts about twice as fast as one of ints.
_BOUNDS: Final = [float(-(1 << 63) + k * (1 << 58)) for k in range(1, 64)]  # 64 buckets
_NS_MARKERS: Final = (
    (XHTML, "<xhtml:link"),
    (IMAGE, "<image:image"),
    (VIDEO, "<video:video"),
    (NEWS, "<news:news"),
)


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One published file: its name, entries, uncompressed and stored bytes."""

    name: str
    kind: Literal["urlset", "sitemapindex", "text"]
    entries: int
    bytes: int
    stored_bytes: int


@dataclass(slots=True)
class WriteResult:
    """What a writer published.

    ``files`` lists every file (shards first, then indexes); ``indexes`` the names
    of the index files (empty when a single sitemap was written directly);
    ``duplicates`` how many repeated locs were dropped (the first occurrence is
    kept), with up to ten of them in ``duplicate_examples``; ``removed`` the stale
    files of an earlier run that were deleted; ``notes`` anything else worth saying.
    """

    directory: Path
    files: list[FileInfo] = field(default_factory=list)
    indexes: list[str] = field(default_factory=list)
    urls: int = 0
    duplicates: int = 0
    duplicate_examples: list[str] = field(default_factory=list)  # as URLs, not escaped
    removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: With a state file: URLs added, changed, unchanged and removed since the last run,
    #: and the shards whose bytes changed.
    changes: dict[str, int] = field(default_factory=dict)
    rewritten: list[str] = field(default_factory=list)


class _Shard:
    __slots__ = ("count", "file", "lines", "nbytes", "news", "ns", "pending", "pending_len")

    def __init__(self, file: ShardFile, ns: int, head: str) -> None:
        self.file = file
        self.ns = ns
        self.count = 0
        self.news = 0
        data = head.encode()
        self.nbytes = len(data)
        self.pending: list[bytes] = [data]
        self.pending_len = 0


class SitemapWriter:
    """Write sitemaps of any size into ``directory``, published atomically on close.

    ``base_url`` is the URL at which ``directory`` is served; relative locs are
    resolved against it and, with ``check_location`` (default), every loc must lie
    under it (sitemaps.org "Sitemap file location"). Use as a context manager: an
    exception inside the block publishes nothing and leaves earlier files intact.
    ``check``, if given, is called with each staged file before anything is published; an
    error finding it returns refuses the publish (``InputError``).

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
        check: Callable[[Path], list[Finding]] | None = None,
    ) -> None:
        if not 1 <= max_urls <= limits.MAX_URLS:
            raise ValueError(f"max_urls must be 1..{limits.MAX_URLS:,}, not {max_urls}")
        if not 1 <= max_bytes <= limits.MAX_BYTES:
            raise ValueError(f"max_bytes must be 1..{limits.MAX_BYTES:,}, not {max_bytes}")
        if not 1 <= max_news <= limits.MAX_NEWS:
            raise ValueError(f"max_news must be 1..{limits.MAX_NEWS:,}, not {max_news}")
        if not 1 <= max_index_entries <= limits.MAX_SITEMAPS:
            raise ValueError(f"max_index_entries must be 1..{limits.MAX_SITEMAPS:,}")
        if index not in ("auto", "always", "never"):
            raise ValueError(f"index must be auto, always or never, not {index!r}")
        if format not in ("xml", "txt"):
            raise ValueError(f"format must be xml or txt, not {format!r}")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise ValueError(f"name {name!r} must be a plain file-name prefix like 'sitemap'")
        base = iri_to_uri(base_url)
        try:
            origin = Origin.of(base)
        except ValueError as exc:
            raise ValueError(f"base_url: {exc}") from None
        if origin.scheme not in ("http", "https"):
            raise ValueError(f"base_url {base_url!r} must be an http(s) URL")
        if not base.endswith("/"):
            base += "/"
            origin = Origin.of(base)
        self.base_url = base
        self._origin = origin
        self.directory = Path(directory)
        self.gzip = gzip
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.max_news = max_news
        self.max_index_entries = max_index_entries
        self.index = index
        self.format = format
        self.stylesheet = stylesheet
        self.name = name
        self.keep_deprecated = keep_deprecated
        self.check_location = check_location
        self.check = check
        self.gzip_level = gzip_level
        when = now if now is not None else dt.datetime.now(dt.UTC)
        self.now = format_lastmod(when)
        self.content_from = Path(content_from) if content_from is not None else None
        self._state: StateStore | None = None
        self._shard_ns: dict[int, int] = {}
        if state is not None:
            if format != "xml":
                raise ValueError("a state file needs XML output (text sitemaps have no lastmod)")
            key = f"{Path(directory).resolve()} {self.base_url}"
            self._state = StateStore(state, key=key)
        self._ext = (".txt" if format == "txt" else ".xml") + (".gz" if gzip else "")
        self._footer = "" if format == "txt" else footer("urlset")
        self._footer_len = len(self._footer)
        esc = re.escape(name)
        owned = rf"{esc}(?:-[0-9]+)?\.(?:xml|txt)(?:\.gz)?|{esc}-index-[0-9]+\.xml"
        self._publisher: Publisher | None = None
        self._owned = re.compile(owned)
        self._worker: Worker | None = None
        self._shards: list[ShardFile] = []
        self._counts: list[int] = []
        self._cur: _Shard | None = None
        self._hashes = array("q")
        self._runs: list[tuple[int, list[int]]] = []  # (file offset, bucket cuts) per run
        self._suspects: set[float] = set()
        self._dropped_ext = 0
        self._closed = False
        self.result = WriteResult(self.directory)

    # -- public API ---------------------------------------------------------------

    def add(self, url: Url | str, *, content_hash: str | None = None) -> None:
        """Add one URL. A string is taken as a loc and may be relative to ``base_url``.

        A loc that repeats an earlier one is dropped when the writer closes (the first
        occurrence stays where it was) and counted in ``result.duplicates``.
        ``content_hash`` (any string that changes when the page changes) is used with a
        state file: see :meth:`_stage`.
        """
        if self._state is not None:
            self._stage(url, content_hash)
            return
        text, ns, news, key = self.entry(url)
        self._put(text, ns, news)
        self._note_keys([key])

    def entry(self, url: Url | str) -> tuple[str, int, int, str]:
        """The line ``url`` becomes, its namespace flags, news count and duplicate key.

        Checks the location. Touches no shard state, so forked formatter processes
        call it too (only the count of extension data a text sitemap drops changes).
        """
        if isinstance(url, str):
            url = Url(self.resolve(url))
        elif not isinstance(url, Url):
            raise TypeError(f"add() takes a Url or a str, not {type(url).__name__}")
        self._check_location(url.loc)
        if self.format == "txt":
            if url.images or url.videos or url.news or url.alternates:
                self._dropped_ext += 1
            return url.loc + "\n", 0, 0, url.loc
        text, ns = url_entry(url, keep_deprecated=self.keep_deprecated)
        return text, ns, 1 if url.news is not None else 0, escape(url.loc)

    @property
    def incremental(self) -> bool:
        """Whether this run uses a state file (every URL then goes through :meth:`add`)."""
        return self._state is not None

    @property
    def fresh(self) -> bool:
        """Nothing added yet."""
        return self._cur is None and not self._shards

    def stage_shard(self, n: int) -> Path:
        """The staging path of shard ``n`` (1-based), creating the staging folder."""
        if self._publisher is None:
            self._publisher = Publisher(self.directory, self._owned)
            self._worker = Worker()
        return self._publisher.stage(f"{self.name}-{n}{self._ext}")

    def adopt_shard(
        self, path: Path, count: int, raw: int, stored: int, run: tuple[bytes, list[int]]
    ) -> None:
        """Take a shard that a formatter process wrote completely at :meth:`stage_shard`.

        ``run`` is :meth:`hash_run` of its loc hashes, computed in that process.
        """
        if self._cur is not None or path != self.stage_shard(len(self._shards) + 1):
            raise RuntimeError("shards must be adopted in order, before anything is added")
        f = ShardFile(path, gzip=self.gzip, level=self.gzip_level)
        f.raw_bytes, f.stored_bytes = raw, stored
        self._shards.append(f)
        self._counts.append(count)
        self._append_run(*run)

    def drop_adopted(self) -> None:
        """Delete every adopted shard and forget it and its hashes: fresh again."""
        if self._cur is not None or self._hashes:
            raise RuntimeError("only adopted shards can be dropped")
        for f in self._shards:
            f.path.unlink(missing_ok=True)
        self._shards.clear()
        self._counts.clear()
        self._runs.clear()
        if self._publisher is not None:
            self._publisher.stage(".hashes").unlink(missing_ok=True)

    @staticmethod
    def hash_run(hashes: array[int]) -> tuple[bytes, list[int]]:
        """Sorted hashes as bytes and their bucket cuts: one run of the duplicate check."""
        run = sorted(map(float, hashes))
        return array("d", run).tobytes(), [0, *(bisect_left(run, b) for b in _BOUNDS), len(run)]

    def _append_run(self, data: bytes, cuts: list[int]) -> None:
        assert self._publisher is not None
        with open(self._publisher.stage(".hashes"), "ab") as fh:
            offset = fh.tell()
            fh.write(data)
        self._runs.append((offset, cuts))

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
        members: list[tuple[str, Url]] = []
        for lang, page in versions.items():
            members.append((lang, page if isinstance(page, Url) else Url(self.resolve(page))))
        links = [Alternate(lang, u.loc) for lang, u in members]
        if x_default is not None:
            xd = x_default if isinstance(x_default, Url) else Url(self.resolve(x_default))
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
        if is_canonical_loc(loc):
            return loc
        text = loc.strip(XML_SPACE)
        if not _SCHEME.match(text):
            text = resolve(text, self.base_url)
        return iri_to_uri(text)

    def close(self) -> WriteResult:
        """Finish every file, write the index, publish; return :attr:`result`."""
        if self._closed:
            return self.result
        self._closed = True
        try:
            self._finish()
        except BaseException:
            self._abort()
            raise
        return self.result

    def __enter__(self) -> SitemapWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._closed = True
            self._abort()
        else:
            self.close()

    # -- internals ----------------------------------------------------------------

    def _check_location(self, loc: str) -> None:
        # under the base URL, the common case: only dot segments could climb out of it
        if loc.startswith(self.base_url) and ("/." not in loc or self._origin.path == "/"):
            return
        if self.check_location:
            why = check_location(loc, self._origin)
            if why is not None:
                raise InputError(
                    f"URL {loc!r} is outside {self.base_url}: {why}",
                    hint="a sitemap may only list URLs under its own folder; "
                    "fix --base-url or the URL",
                )

    def _note_keys(self, keys: list[str]) -> None:
        """Remember the hashes of these locs for the duplicate check at the end."""
        self._hashes.extend(map(hash, keys))
        if len(self._hashes) >= _RUN:
            self._spill()

    def _spill(self) -> None:
        """Sort the in-memory hashes and append them to the hash file as one run.

        The run's bucket boundaries (64 equal ranges of the hash space) are kept so
        that the end-of-run check can read one bucket of every run at a time.
        """
        self._append_run(*self.hash_run(self._hashes))
        self._hashes = array("q")

    def _find_repeated_hashes(self) -> set[float]:
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
        assert self._publisher is not None
        # The runs' floats are read as their 64-bit patterns, equal exactly when the
        # floats are (no NaN, no -0.0 among them): a set of ints is built faster.
        repeated: set[int] = set()
        with open(self._publisher.stage(".hashes"), "rb") as fh:
            for b in range(len(_BOUNDS) + 1):
                part = array("q")
                for offset, cuts in self._runs:
                    lo, hi = cuts[b], cuts[b + 1]
                    if hi > lo:
                        fh.seek(offset + 8 * lo)
                        part.frombytes(fh.read(8 * (hi - lo)))
                # a set finds out whether the bucket repeats a hash, faster than sorting it
                if len(part) > 1 and len(set(part)) != len(part):
                    ordered = sorted(part)
                    repeated.update(compress(ordered, map(eq, ordered, islice(ordered, 1, None))))
        return set(array("d", array("q", repeated).tobytes()))

    def _put(self, text: str, ns: int, news: int) -> None:
        data = text.encode()
        size = len(data)
        cur = self._cur
        if cur is not None and ns & ~cur.ns:
            grow = len(self._header(cur.ns | ns)) - len(self._header(cur.ns))
        else:
            grow = 0
        if (
            cur is None
            or cur.count >= self.max_urls
            or cur.nbytes + grow + size + self._footer_len > self.max_bytes
            or cur.news + news > self.max_news
        ):
            cur = self._open(ns)
            if cur.nbytes + size + self._footer_len > self.max_bytes:
                raise InputError(
                    f"one entry is {size:,} bytes, more than fits in a sitemap of "
                    f"{self.max_bytes:,} bytes",
                    hint="raise --max-bytes or shorten the entry",
                )
        elif grow:
            self._widen(cur, ns)
        cur.pending.append(data)
        cur.pending_len += size
        cur.nbytes += size
        cur.count += 1
        cur.news += news
        if cur.pending_len >= _FLUSH:
            self._flush(cur)

    def _add_block(self, data: bytes, count: int, hashes: array[int]) -> None:
        """Add ``count`` ready entry lines without extensions (the fast path).

        ``hashes`` are ``hash()`` of the entries' locs as escaped in the file, computed
        in this process or in a forked one (which shares the hash seed).
        """
        if self._publisher is None:
            self._open(0)
        self._hashes.extend(hashes)
        if len(self._hashes) >= _RUN:
            self._spill()
        while count:
            cur = self._cur
            room = 0 if cur is None else self.max_urls - cur.count
            if room <= 0:  # no shard yet, or it is full: _put opens the next one
                cut = data.index(b"\n") + 1
                self._put(data[:cut].decode(), 0, 0)
                data, count = data[cut:], count - 1
                continue
            if count > room:
                parts = data.split(b"\n", room)
                head, data = b"\n".join(parts[:room]) + b"\n", parts[room]
                taken = room
            else:
                head, data, taken = data, b"", count
            size = len(head)
            assert cur is not None
            if cur.nbytes + size + self._footer_len <= self.max_bytes:
                cur.pending.append(head)
                cur.pending_len += size
                cur.nbytes += size
                cur.count += taken
                if cur.pending_len >= _FLUSH:
                    self._flush(cur)
            else:  # near the byte limit: place line by line
                for line in head.decode().splitlines(keepends=True):
                    self._put(line, 0, 0)
            count -= taken

    def _header(self, ns: int) -> str:
        return "" if self.format == "txt" else header("urlset", ns, self.stylesheet)

    def _open(self, ns: int) -> _Shard:
        if self._cur is not None:
            self._close_shard()
        if self._publisher is None:
            self._publisher = Publisher(self.directory, self._owned)
            self._worker = Worker()
        n = len(self._shards) + 1
        f = ShardFile(
            self._publisher.stage(f"{self.name}-{n}{self._ext}"),
            gzip=self.gzip,
            level=self.gzip_level,
        )
        self._shards.append(f)
        assert self._worker is not None
        self._worker.submit(f._do_open)
        self._cur = _Shard(f, ns, self._header(ns))
        return self._cur

    def _flush(self, cur: _Shard) -> None:
        if cur.pending:
            data = b"".join(cur.pending)
            cur.pending.clear()
            cur.pending_len = 0
            f = cur.file
            assert self._worker is not None
            self._worker.submit(lambda: f._do_write(data))

    def _widen(self, cur: _Shard, ns: int) -> None:
        """A new extension namespace appeared mid-shard: rewrite it with a wider root tag."""
        assert self._worker is not None
        self._flush(cur)
        self._worker.submit(cur.file._do_close)
        self._worker.wait()
        old_head = self._header(cur.ns).encode()
        body = cur.file.read_back()[len(old_head) :]
        cur.ns |= ns
        head = self._header(cur.ns)
        cur.file.raw_bytes = 0
        self._worker.submit(cur.file._do_open)
        cur.pending = [head.encode(), body]
        cur.nbytes = len(cur.pending[0]) + len(body)
        cur.pending_len = cur.nbytes

    def _close_shard(self) -> None:
        cur = self._cur
        assert cur is not None and self._worker is not None
        cur.pending.append(self._footer.encode())
        self._flush(cur)
        self._worker.submit(cur.file._do_close)
        self._counts.append(cur.count)
        self._cur = None

    def _abort(self) -> None:
        if self._state is not None:
            self._state.close()
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        if self._publisher is not None:
            self._publisher.abort()

    def _finish(self) -> None:
        if self._state is not None:
            self._finish_incremental()
            return
        if self._cur is None and not self._shards:
            # Empty input: a valid, empty urlset (XSD wants ≥ 1 url; Google reports
            # only "Empty sitemap", and allows empty news sitemaps).
            self._open(0)
        if self._cur is not None:
            self._close_shard()
        assert self._worker is not None and self._publisher is not None
        self._worker.wait()
        self._worker.stop()
        self._worker = None
        self._suspects = self._find_repeated_hashes()
        if self._suspects:
            self._drop_duplicates()
        kind: Literal["urlset", "text"] = "text" if self.format == "txt" else "urlset"
        names = [f.path.name for f in self._shards]
        single = len(names) == 1 and self.index != "always"
        if self.index == "never" and len(names) > 1:
            raise InputError(
                f"the URLs need {len(names)} sitemaps but --index never allows only one",
                hint="use --index auto, or raise the limits",
            )
        if single:
            final = f"{self.name}{self._ext}"
            self._shards[0].path.rename(self._publisher.stage(final))
            names = [final]
        infos = [
            FileInfo(n, kind, c, f.raw_bytes, f.stored_bytes)
            for n, c, f in zip(names, self._counts, self._shards, strict=True)
        ]
        indexes = [] if single else self._write_indexes(names)
        self.result.files = infos + indexes
        self.result.indexes = [i.name for i in indexes]
        self.result.urls = sum(self._counts)
        if self._dropped_ext:
            self.result.notes.append(
                f"{self._dropped_ext} URLs carried images, videos, news or alternates, "
                "which a text sitemap cannot hold; only their locs were written"
            )
        last = [i.name for i in indexes]
        self._check_staged([*names, *last])
        self.result.removed = self._publisher.publish(names, last)

    def _write_indexes(
        self, names: list[str], lastmods: Mapping[str, str] | None = None
    ) -> list[FileInfo]:
        """Index files over ``names``, each within the entry and byte limits (exactly)."""
        assert self._publisher is not None
        head = header("sitemapindex", 0, self.stylesheet)
        tail = footer("sitemapindex")
        fixed = len(head.encode()) + len(tail.encode())
        groups: list[list[str]] = [[]]
        size = fixed
        for n in names:
            lm = lastmods.get(n) if lastmods else None
            entry = sitemap_entry(SitemapRef(self.base_url + n, lastmod=lm))
            b = len(entry.encode())
            if fixed + b > self.max_bytes:
                raise InputError(
                    f"an index entry ({b} bytes) does not fit in {self.max_bytes:,} bytes",
                    hint="raise --max-bytes",
                )
            if len(groups[-1]) >= self.max_index_entries or size + b > self.max_bytes:
                groups.append([])
                size = fixed
            groups[-1].append(entry)
            size += b
        out = []
        for k, group in enumerate(groups, 1):
            iname = f"{self.name}.xml" if len(groups) == 1 else f"{self.name}-index-{k}.xml"
            data = (head + "".join(group) + tail).encode()
            self._publisher.stage(iname).write_bytes(data)
            out.append(FileInfo(iname, "sitemapindex", len(group), len(data), len(data)))
        if len(groups) > 1:
            self.result.notes.append(
                f"{len(names):,} sitemaps need {len(groups)} index files (an index lists at "
                f"most {self.max_index_entries:,} sitemaps in at most {self.max_bytes:,} "
                f"bytes); submit each index: {', '.join(i.name for i in out)}"
            )
        return out

    def _drop_duplicates(self) -> None:
        """Exact pass over the staged shards: keep each repeated loc's first occurrence.

        Only shards holding a repeated hash are rewritten; locs are compared as
        strings, so a (very unlikely) hash collision removes nothing.
        """
        txt = self.format == "txt"
        # a text sitemap's locs are its lines; an entry line's loc is its first <loc>
        find_re = re.compile(r"^(.+)$" if txt else r"^<url><loc>([^<]*)</loc>", re.M)
        loc_re = re.compile(r"<loc>([^<]*)</loc>")
        first: set[str] = set()
        suspects = self._suspects
        kept_counts: list[int] = []
        examples = self.result.duplicate_examples
        removed_total = 0
        for i, f in enumerate(self._shards):
            text = f.read_back().decode()
            if not any(map(suspects.__contains__, map(float, map(hash, find_re.findall(text))))):
                kept_counts.append(self._counts[i])
                continue
            lines = text.splitlines(keepends=True)
            keep: list[str] = []
            removed = 0
            for line in lines:
                if txt:
                    key = line.rstrip("\n")
                else:
                    m = loc_re.match(line, 5) if line.startswith("<url>") else None
                    key = m.group(1) if m else ""
                if key and float(hash(key)) in suspects:
                    if key in first:
                        removed += 1
                        if len(examples) < 10:
                            examples.append(key if txt else unescape(key))
                        continue
                    first.add(key)
                keep.append(line)
            kept_counts.append(self._counts[i] - removed)
            if removed:
                removed_total += removed
                if txt:
                    body = "".join(keep)
                else:
                    root = next(j for j, line in enumerate(keep) if line.startswith("<urlset"))
                    body = "".join(keep[root + 1 :])
                    ns = 0
                    for flag, marker in _NS_MARKERS:
                        if marker in body:
                            ns |= flag
                    body = self._header(ns) + body
                f._do_open()
                f.raw_bytes = 0
                f._do_write(body.encode())
                f._do_close()
        self.result.duplicates = removed_total
        # Shards left without entries are dropped and the rest renumbered in order.
        if 0 in kept_counts and any(kept_counts):
            assert self._publisher is not None
            shards: list[ShardFile] = []
            counts: list[int] = []
            for f, c in zip(self._shards, kept_counts, strict=True):
                if c == 0:
                    f.path.unlink()
                    continue
                n = len(shards) + 1
                new = self._publisher.stage(f"{self.name}-{n}{self._ext}")
                if new != f.path:
                    f.path.rename(new)
                    f.path = new
                shards.append(f)
                counts.append(c)
            self._shards, kept_counts = shards, counts
        self._counts = kept_counts

    # -- incremental runs (a state file) ---------------------------------------------

    def _content(self, url: Url, given: str | None) -> bytes | None:
        """The page content's hash: given by the source, or hashed from ``content_from``."""
        if given is not None:
            return hashlib.blake2b(given.encode(), digest_size=16).digest()
        if self.content_from is None:
            return None
        from urllib.parse import unquote

        path = unquote(Origin.of(url.loc).path[len(self._origin.path) :])
        root = self.content_from
        for cand in (root / path, root / path / "index.html", root / (path + ".html")):
            if cand.is_file() and root.resolve() in cand.resolve().parents:
                return hashlib.blake2b(cand.read_bytes(), digest_size=16).digest()
        return None

    def _stage(self, url: Url | str, content_hash: str | None) -> None:
        """Record one URL of an incremental run.

        Its lastmod, when the input gives none, is the time its content last changed:
        the content hash (from the source or ``content_from``) when there is one, else
        the entry as written; "now" only for new or changed pages.
        """
        assert self._state is not None
        if isinstance(url, str):
            url = Url(self.resolve(url))
        self._check_location(url.loc)
        bare, _ = url_entry(url, keep_deprecated=self.keep_deprecated, lastmod=None)
        fp = hashlib.blake2b(bare.encode(), digest_size=16).digest()
        content = self._content(url, content_hash)
        old = self._state.old(url.loc)
        if old is None:
            changed, status = self.now, "new"
        else:
            same = content == old.content if content is not None else fp == old.fp
            changed, status = (old.changed, "same") if same else (self.now, "changed")
        stamp = changed if url.lastmod is None else url.lastmod
        text, ns = url_entry(url, keep_deprecated=self.keep_deprecated, lastmod=str(stamp))
        news = 1 if url.news is not None else 0
        shard = old.shard if old is not None else None
        data = text.encode()
        if not self._state.stage(url.loc, shard, data, ns, news, fp, content, changed, status):
            self.result.duplicates += 1
            if len(self.result.duplicate_examples) < 10:
                self.result.duplicate_examples.append(url.loc)

    def _fits(self, load: list[int], size: int, ns: int, news: int) -> bool:
        count, nbytes, nnews, nns = load
        head = len(self._header(nns | ns).encode())
        return (
            count + 1 <= self.max_urls
            and head + nbytes + size + self._footer_len <= self.max_bytes
            and nnews + news <= self.max_news
        )

    def _assign_shards(self) -> list[int]:
        """Keep every URL in its shard while it fits; place the others; return shard numbers.

        Assignment (documented): a URL stays in the shard it was in; a shard that no
        longer fits loses its last entries; new and displaced URLs fill the highest
        shard that has room, in input order, then new shards numbered after it.
        """
        st = self._state
        assert st is not None
        kept = sorted({n for n, *_ in st.shard_loads()})
        moves: list[tuple[int, int | None]] = []
        loads: dict[int, list[int]] = {}
        for n in kept:
            load = [0, 0, 0, 0]
            for seq, _, size, ns, news in st.members(n):
                if self._fits(load, size, ns, news):
                    load[0] += 1
                    load[1] += size
                    load[2] += news
                    load[3] |= ns
                else:
                    moves.append((seq, None))
            loads[n] = load
        for seq, shard in moves:
            st.assign(seq, shard)
        current = kept[-1] if kept else 1
        load = loads.get(current, [0, 0, 0, 0])
        placed: list[tuple[int, int]] = []
        for seq, _, size, ns, news in st.members(None):
            if not self._fits(load, size, ns, news):
                current = max(current + 1, max(loads, default=0) + 1)
                load = loads.setdefault(current, [0, 0, 0, 0])
                if not self._fits(load, size, ns, news):
                    raise InputError(
                        f"one entry is {size:,} bytes, more than fits in a sitemap of "
                        f"{self.max_bytes:,} bytes",
                        hint="raise --max-bytes or shorten the entry",
                    )
            load[0] += 1
            load[1] += size
            load[2] += news
            load[3] |= ns
            loads[current] = load
            placed.append((seq, current))
        for seq, shard in placed:
            st.assign(seq, shard)
        self._shard_ns = {n: ld[3] for n, ld in loads.items() if ld[0]}
        return sorted(self._shard_ns)

    def _check_staged(self, names: Iterable[str]) -> None:
        """Run the ``check`` hook on each staged file; publish nothing if it finds errors."""
        if self.check is None:
            return
        assert self._publisher is not None
        errors = [
            f
            for name in names
            for f in self.check(self._publisher.stage(name))
            if f.severity == "error"
        ]
        if errors:
            raise InputError(
                f"the written sitemaps fail validation ({len(errors):,} errors, the first: "
                f"{errors[0].rule} {errors[0].message}); nothing was published",
                hint="fix the input, or write without --validate",
            )

    def _finish_incremental(self) -> None:
        st = self._state
        assert st is not None
        if self._publisher is None:
            self._publisher = Publisher(self.directory, self._owned)
        numbers = self._assign_shards()
        single = len(numbers) <= 1 and self.index != "always"
        shard_state: dict[int, tuple[bytes, str]] = {}
        infos: list[FileInfo] = []
        lastmods: dict[str, str] = {}
        for n in numbers or [1]:
            name = f"{self.name}{self._ext}" if single else f"{self.name}-{n}{self._ext}"
            f = ShardFile(self._publisher.stage(name), gzip=self.gzip, level=self.gzip_level)
            f._do_open()
            digest = hashlib.blake2b(digest_size=16)
            count = 0
            parts = [self._header(self._shard_ns.get(n, 0)).encode()]
            for _, entry, _, _, _ in st.members(n):
                parts.append(entry)
                count += 1
                if len(parts) >= 4096:
                    chunk = b"".join(parts)
                    digest.update(chunk)
                    f._do_write(chunk)
                    parts = []
            parts.append(self._footer.encode())
            chunk = b"".join(parts)
            digest.update(chunk)
            f._do_write(chunk)
            f._do_close()
            old = st.old_shard(n)
            d = digest.digest()
            changed = old[1] if old is not None and old[0] == d else self.now
            if old is None or old[0] != d:
                self.result.rewritten.append(name)
            shard_state[n] = (d, changed)
            lastmods[name] = changed
            infos.append(FileInfo(name, "urlset", count, f.raw_bytes, f.stored_bytes))
        if self.index == "never" and not single:
            raise InputError(
                f"the URLs need {len(numbers)} sitemaps but --index never allows only one",
                hint="use --index auto, or raise the limits",
            )
        indexes = [] if single else self._write_indexes([i.name for i in infos], lastmods)
        self.result.files = infos + indexes
        self.result.indexes = [i.name for i in indexes]
        self.result.urls = sum(i.entries for i in infos)
        self.result.changes = st.counts()
        self._check_staged([*(i.name for i in infos), *(i.name for i in indexes)])
        # The state first: if the publish below is cut short, the next run writes the
        # same files again (same state, same lastmods) and its journal completes it.
        st.commit(shard_state, self.now)
        st.close()
        self.result.removed = self._publisher.publish(
            [i.name for i in infos], [i.name for i in indexes]
        )
