"""io: the state store of incremental runs, a SQLite file (WAL mode).

Per URL it remembers the shard it was written to, a fingerprint of its entry as
written (without lastmod), the page content's hash when the source gave one, and
the time that content last changed; per shard, the digest of its bytes and the
time they last changed, and the file it was published as (its name and the digest of
its bytes: a next run whose shard is unchanged keeps that file). The meta table keeps
the time of the first run (``first_run``): a URL whose change time is still that one has
not changed since the state began, so its real change time is unknown (see
:meth:`StateStore.baseline`).

A run costs a sequential pass over the state, never a lookup per URL. The URLs are
kept in a URL file beside the SQLite file (``NAME.urls-…``, named in the meta table),
one line per URL in loc order: loc, shard, fingerprint, content hash, change time. The
run's entries go to a run folder beside the state file (``.NAME.run-PID-…``), their keys
(loc, input position, fingerprints) to an external sort (:mod:`.extsort`, 64 MiB in
memory at most), and the sorted keys are merged once with the URL file (bytes order,
as SQLite's for a state of the earlier format, whose URLs are in its ``urls`` table and
move to a URL file on the first run). The merge writes the new URL file as it goes, the
input position of each of its lines (the column ``order``), and fills columns of
fixed-width values, one per staged URL, in files the run maps into memory (``mmap``):
the shard (the old one, then the assigned one; ``DUPLICATE`` for a repeated loc), the
change time (an index into :attr:`StateStore.times`), the entry's size and its flags.
So Python holds nothing per URL: 17 bytes a URL are in the columns on disk, beside the
entry, its key and its line of the URL file, and the operating system's page cache
decides what is in memory. Blocks of keys are merged at once where they match the stored
URLs (or follow the last one), compared as fields at C speed (see :class:`_Merge`).

:meth:`StateStore.commit` completes the new URL file (when the run assigned shards, every
line's shard field, 256 KiB at a time), syncs it to disk, then in the run's one
transaction (begun when the store opens) names it in the meta table and records the
removed URLs, the shards and the digests of the shard files written; the file it
replaces is deleted after. A crash leaves the old state or the new one (a URL file no
state names is deleted by the next run).

A run that staged a plain input file range by range (:mod:`sitemapkit.writer.stage`)
also keeps its columns and entry lines, as they were at commit, in a cache folder beside
the state file (``NAME.cache-…``, named in the meta table with the ranges' records:
:class:`Range`). The next run's input ranges are compared with them
(:meth:`StateStore.cached`): when every range starts at the same line and holds as many
lines, the same locs and fingerprints in the same order (bytes that did not change at
all, or only in their lastmods), the run is the last one's again with new entry lines
where its bytes changed: the cached ranges are copied instead of formatted
(:meth:`StateStore.stage_cached`), and :meth:`StateStore.resolve` takes the last run's
shards, change times and URL file instead of merging (:meth:`StateStore.reuse`). Any
other change takes the merge. The cache folder is written, synced and renamed into place
before the commit names it, and a folder no state names is deleted by the next run.
"""

from __future__ import annotations

import heapq
import itertools
import json
import mmap
import operator
import os
import shutil
import sqlite3
import sys
import uuid
from array import array
from binascii import hexlify
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal, NamedTuple, TypedDict

from .extsort import ExternalSorter

__all__ = [
    "DUPLICATE",
    "NEWS",
    "NS",
    "OWN",
    "PLACED",
    "Range",
    "StateStore",
    "changed_in_last_run",
    "part_name",
    "sort_keys",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS urls(
    loc TEXT PRIMARY KEY, shard INTEGER NOT NULL, fp BLOB NOT NULL, content BLOB,
    changed TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shards(n INTEGER PRIMARY KEY, digest BLOB NOT NULL,
    changed TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS removed(loc TEXT PRIMARY KEY, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS published(n INTEGER PRIMARY KEY, name TEXT NOT NULL,
    digest TEXT NOT NULL, how TEXT NOT NULL);
"""

#: Flags of a staged URL (one byte): its extension namespaces, and:
NS: Final = 0x0F
OWN: Final = 0x10  # the entry holds its own lastmod (the source gave it)
NEWS: Final = 0x20  # the entry is a news entry
PLACED: Final = 0x40  # assigned a shard by this run (new, or displaced from its own)
#: The shard of a staged URL whose loc an earlier one of the run had.
DUPLICATE: Final = -1
_BLOCK: Final = 4096  # rows buffered before they go to the run folder; keys merged at once
_FEW: Final = 32  # the fewest keys the merge looks at together
_SORT_BYTES: Final = 64 << 20  # memory for the sort of the keys (200,000 URLs fit)
#: The run folder's columns that a cache keeps (besides the ranges' entry lines, see
#: :func:`part_name`), and their widths a URL (``order`` has one a line of the URL file,
#: so none for a repeated loc).
_CACHED: Final = {"sizes": 4, "flags": 1, "shards": 4, "cids": 4, "order": 4}
_CACHE_FORMAT: Final = 1  # of the cache's record (meta ``cache_ranges``)
#: Flags as staged: without PLACED (which the run that cached them set).
_UNPLACED: Final = bytes(f & ~PLACED for f in range(256))
_PLACED_FLAGS: Final = bytes(f for f in range(256) if f & PLACED)  # (deleted by translate)
_REWRITE: Final = 256 << 10  # bytes of the URL file read at a time to set its shard fields


def part_name(k: int) -> str:
    """The file in the run folder (and in a cache) of the entry lines of input range ``k``."""
    return f"part-{k:06d}"


def _cached(name: str) -> bool:
    """Whether a cache keeps the run folder's file ``name``."""
    return name in _CACHED or name.startswith("part-")


class Range(NamedTuple):
    """The record of one input range that a run staged: its first line, lines (one URL
    each), bytes of entry lines, and two digests (hex): of its input bytes, and of its
    locs, fingerprints and content hashes in input order."""

    line: int
    lines: int
    size: int
    digest: str
    urls: str


_Code = Literal["i", "I", "B", "Q"]


def _column(path: Path, code: _Code) -> tuple[mmap.mmap | None, memoryview]:
    """A file of fixed-width values mapped writable, as a typed memoryview."""
    if path.stat().st_size == 0:
        return None, memoryview(array(code))
    with open(path, "r+b") as fh:
        m = mmap.mmap(fh.fileno(), 0)
    return m, memoryview(m).cast(code)


class _CacheRecord(TypedDict):
    """The meta table's record of a cache (``cache_ranges``, JSON)."""

    format: int
    key: str
    ranges: list[list[Any]]  # Range fields
    times: list[str]  # the change times its column ``cids`` indexes
    duplicates: int
    examples: list[str]  # the first repeated locs


def _clear_url_files(state: Path, keep: str | None) -> None:
    """Remove URL files of the state that it does not name (a run cut short left them)."""
    for entry in state.parent.glob(f"{state.name}.urls-*"):
        if entry.name != keep:
            entry.unlink(missing_ok=True)


def _clear_caches(state: Path, keep: str | None) -> None:
    """Remove cache folders of the state that it does not name."""
    for entry in state.parent.glob(f"{state.name}.cache-*"):
        if entry.name != keep:
            shutil.rmtree(entry, ignore_errors=True)


def _clear_dead_runs(folder: Path, prefix: str) -> None:
    """Remove run folders that killed processes left beside the state file."""
    for entry in folder.glob(prefix + "*"):
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
        except (ValueError, PermissionError):
            pass  # not ours, or alive under another user


class StateStore:
    """One incremental run over a state file; see the module docstring.

    Stage every URL (:meth:`stage`), :meth:`resolve` once, then read and assign the
    columns (:attr:`shards` and the others), and :meth:`commit` the new state.
    """

    def __init__(self, path: str | Path, *, key: str) -> None:
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        row = self.db.execute("SELECT value FROM meta WHERE key='output'").fetchone()
        if row is not None and row[0] != key:
            self.db.close()
            raise ValueError(
                f"state file {str(self.path)!r} belongs to another output ({row[0]}); "
                "use one state file per output folder and base URL"
            )
        self.key = key
        meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        #: This run is the first on the file (nothing was committed to it yet).
        self.first = "last_run" not in meta
        self._baseline = meta.get("first_run")
        # One transaction for the whole run, begun before the URL file is read: it keeps
        # other runs out until commit() names the new file (or the run rolls back).
        self.db.execute("BEGIN IMMEDIATE")
        #: The file of the stored URLs (beside this one), its name in the meta table.
        self._urls = self.db.execute("SELECT value FROM meta WHERE key='urls'").fetchone()
        self._urls = self._urls[0] if self._urls is not None else None
        _clear_url_files(self.path, keep=self._urls)
        #: The last run's cache folder (beside this file) and its record.
        q = "SELECT key, value FROM meta WHERE key IN ('cache', 'cache_ranges')"
        cache = dict(self.db.execute(q).fetchall())
        self._cache: str | None = cache.get("cache")
        self._cache_record: _CacheRecord | None = (
            json.loads(cache["cache_ranges"]) if "cache_ranges" in cache else None
        )
        _clear_caches(self.path, keep=self._cache)
        self._legacy = bool(self.db.execute("SELECT EXISTS(SELECT 1 FROM urls)").fetchone()[0])
        self._had_removed = bool(
            self.db.execute("SELECT EXISTS(SELECT 1 FROM removed)").fetchone()[0]
        )
        prefix = f".{self.path.name}.run-"
        _clear_dead_runs(self.path.parent, prefix)
        self.folder = self.path.parent / f"{prefix}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.folder.mkdir()
        #: The URL file this run writes (named in the meta table by commit()).
        self._new = f"{self.path.name}.urls-{uuid.uuid4().hex[:12]}"
        #: URLs staged (duplicates included); the input position of the next one.
        self.count = 0
        self._open_columns()
        self._rows: list[tuple[bytes, bytes, bytes, bytes, int]] = []
        self._maps: list[mmap.mmap] = []
        self._views: list[memoryview] = []
        self._counts = {"added": 0, "changed": 0, "unchanged": 0, "removed": 0}
        #: The change times of this run's URLs; :attr:`cids` index it.
        self.times: list[str] = []
        #: Repeated locs: how many, and the first few in input order.
        self.duplicates = 0
        self.duplicate_examples: list[str] = []
        #: The ranges this run staged (see :class:`Range`), and the key they were made
        #: under: what the commit records with the cache (none unless they cover all).
        self.ranges: list[Range] = []
        self.ranges_key: str | None = None
        self._reusing = False
        self._prepared = False

    def _open_columns(self) -> None:
        # the staged columns, written in input order; closed by resolve() or close()
        folder = self.folder
        #: The files of the entry lines in the run folder, in input order: a range's that
        #: another process wrote (:meth:`stage_made`) or a cache kept, or this one's
        #: (``_own``, for the URLs staged here since the last of those).
        self._parts: list[str] = []
        self._own: BinaryIO | None = None
        self._sizes = open(folder / "sizes", "wb")  # noqa: SIM115
        self._flags = open(folder / "flags", "wb")  # noqa: SIM115
        self._keys = ExternalSorter(self.folder, max_bytes=_SORT_BYTES, prefix="keys")

    def baseline(self, now: str) -> str | None:
        """The change time that means "unknown": the first run's time (``now`` on it).

        ``None`` for a state file written before the first run was recorded.
        """
        return now if self.first else self._baseline

    def _flush(self) -> None:
        if self._rows:
            locs, entries, fps, contents, flags = zip(*self._rows, strict=True)
            self._rows = []
            self.stage(list(locs), list(entries), list(fps), list(contents), bytes(flags))

    @property
    def staged(self) -> int:
        """URLs staged so far, those still buffered included."""
        return self.count + len(self._rows)

    def _refuse_more(self) -> None:
        if self._reusing:  # the cached ranges have no keys to merge these with
            raise RuntimeError(
                "a run that takes a whole input file from the last run's cache takes no "
                "other URLs after it: add them before the file"
            )

    def stage_one(self, loc: str, entry: bytes, fp: str, content: str | None, flags: int) -> None:
        """Stage one URL (buffered, refused at the flush after a reused file: see
        :meth:`stage`): its entry line, fingerprints (hex) and flags."""
        self._rows.append((loc.encode(), entry, fp.encode(), (content or "").encode(), flags))
        if len(self._rows) >= _BLOCK:
            self._flush()

    def stage(
        self,
        locs: list[bytes],
        entries: list[bytes],
        fps: list[bytes],
        contents: list[bytes] | None,
        flags: bytes,
    ) -> None:
        """Stage URLs in input order: locs (UTF-8), entry lines, fingerprints and content
        hashes in hex (``b""``: none; ``contents`` ``None``: none has one), flags."""
        self._refuse_more()
        self._flush()  # the rows staged one by one before these
        seq = self.count
        self.count += len(locs)
        if self._own is None:
            name = f"rows-{len(self._parts):06d}"
            self._own = open(self.folder / name, "wb", buffering=1 << 20)  # noqa: SIM115
            self._parts.append(name)
        self._own.writelines(entries)
        array("I", map(len, entries)).tofile(self._sizes)
        self._flags.write(flags)
        self._keys.extend(sort_keys(locs, fps, contents, seq))

    def stage_made(
        self,
        seq: int,
        part: str,
        sizes: bytes,
        flags: bytes,
        keys: bytes,
        record: Range | None = None,
    ) -> None:
        """Stage URLs made elsewhere (another process) as :meth:`stage` would: the first
        one's input position, the file in the run folder that holds their entry lines
        (``part``, which it wrote), their sizes (``array("I")`` bytes), flags and
        :func:`sort_keys` lines, each joined; ``record``: they are a whole input range
        (see :attr:`ranges`). The keys are not needed when the run :meth:`reuse` s the
        last one's."""
        self._flush()
        if seq != self.count:
            raise RuntimeError(f"URLs staged out of order: {seq}, not {self.count}")
        if (self.folder / part).stat().st_size != sum(array("I", sizes)):
            raise RuntimeError(f"the entry lines of {part} are not as long as their sizes")
        self._end_own()
        self._parts.append(part)
        self.count += len(flags)
        self._sizes.write(sizes)
        self._flags.write(flags)
        if not self._reusing:
            self._keys.extend(keys.splitlines(keepends=True))
        if record is not None:
            self.ranges.append(record)

    def _end_own(self) -> None:
        """Close this store's own part: URLs staged here after this go to a new one."""
        if self._own is not None:
            self._own.close()
            self._own = None

    def restart(self) -> None:
        """Drop every URL staged (before the first :meth:`resolve`)."""
        self._close_columns()
        for entry in self.folder.iterdir():
            entry.unlink()
        self._open_columns()
        self.count = 0
        self._rows = []
        self.ranges = []
        self._reusing = False

    def cached(self, key: str) -> list[Range] | None:
        """The ranges the last run staged, if it kept them under ``key`` and its cache is
        whole (every file of the size its record says); ``None`` otherwise."""
        rec = self._cache_record
        if self._cache is None or self._urls is None or self._legacy or self.staged:
            return None
        if rec is None or rec.get("format") != _CACHE_FORMAT or rec.get("key") != key:
            return None
        ranges = [Range(*r) for r in rec["ranges"]]
        count = sum(r.lines for r in ranges)
        lines = count - rec["duplicates"]
        folder = self.path.parent / self._cache
        sizes = {
            name: width * (lines if name == "order" else count) for name, width in _CACHED.items()
        }
        sizes.update((part_name(k), r.size) for k, r in enumerate(ranges))
        try:
            if any((folder / name).stat().st_size != size for name, size in sizes.items()):
                return None
        except OSError:
            return None
        return ranges

    def reuse(self) -> None:
        """Make this run the last one's again (see the module docstring): called before
        anything is staged, after :meth:`cached`; every range is then staged from the
        cache (:meth:`stage_cached`) or made anew (:meth:`stage_made`) with the same
        locs and fingerprints, in input order, or the run :meth:`restart` s."""
        if self.staged or self._cache is None:
            raise RuntimeError("reuse() needs a cache and nothing staged")
        self._reusing = True

    def stage_cached(self, k: int, record: Range) -> None:
        """Stage the last run's range ``k`` (``record``) as it was: its entry lines (the
        cache's file, linked into the run folder), sizes and flags from the cache."""
        if not self._reusing:
            raise RuntimeError("stage_cached() outside a reuse()")
        assert self._cache is not None
        folder = self.path.parent / self._cache
        part = part_name(k)
        try:
            os.link(folder / part, self.folder / part)  # never written again: shared
        except OSError:  # no hard links there
            shutil.copyfile(folder / part, self.folder / part)
        self._end_own()
        self._parts.append(part)
        seq, n = self.count, record.lines
        for name, out, at in (("sizes", self._sizes, 4 * seq), ("flags", self._flags, seq)):
            width = _CACHED[name]
            with open(folder / name, "rb") as fh:
                fh.seek(at)
                data = fh.read(width * n)
            if len(data) != width * n:
                raise RuntimeError(f"the cache's {name} file is shorter than its record")
            out.write(data.translate(_UNPLACED) if name == "flags" else data)
        self.count += n
        self.ranges.append(record)

    def resolve(self, now: str) -> None:
        """Merge the staged URLs with the stored ones: fill the columns and the counts.

        A URL of the state is the same when its content hash (if the run has one for
        it) or else its fingerprint is; it keeps its change time, a new or changed one
        gets ``now``.
        """
        self._flush()
        self._close_columns()
        for name in ("shards", "cids"):
            if self._reusing:
                assert self._cache is not None
                shutil.copyfile(self.path.parent / self._cache / name, self.folder / name)
                continue
            with open(self.folder / name, "wb") as fh:
                fh.truncate(4 * self.count)
        #: Per staged URL: its shard (0: none yet), change time, entry bytes, flags.
        self.shards = self._map("shards", "i")
        self.cids = self._map("cids", "i")
        self.sizes = self._map("sizes", "I")
        self.flags = self._map("flags", "B")
        if self._reusing:
            self._reuse()
        else:
            self._merge(now.encode())

    def _close_columns(self) -> None:
        self._end_own()
        for fh in (self._sizes, self._flags):
            fh.close()

    def _map(self, name: str, code: _Code) -> memoryview:
        m, view = _column(self.folder / name, code)
        if m is not None:
            self._maps.append(m)
        self._views.append(view)
        return view

    def _stored(self) -> Iterator[bytes]:
        """The stored URLs in loc order as lines ``loc, shard, fp, content, changed``."""
        if self._legacy:  # a state file of an earlier version keeps them in SQLite
            q = "SELECT loc, shard, fp, content, changed FROM urls ORDER BY loc"
            for loc, shard, fp, content, changed in self.db.execute(q):
                yield b"%b\t%08x\t%b\t%b\t%b\n" % (
                    loc.encode(),
                    shard,
                    hexlify(fp),
                    hexlify(content) if content else b"",
                    changed.encode(),
                )
        elif self._urls is not None:
            with open(self.path.parent / self._urls, "rb", buffering=1 << 20) as fh:
                yield from fh

    def _merge(self, now: bytes) -> None:
        """One pass over the sorted keys and the stored URLs (both in loc order); see
        :class:`_Merge`."""
        with (
            open(self.path.parent / self._new, "wb", buffering=1 << 20) as out,
            open(self.folder / "removed", "wb") as gone,
            open(self.folder / "added", "wb") as new,
            open(self.folder / "order", "wb") as order,
        ):
            m = _Merge(self, now, out, order, gone, new if self._had_removed else None)
            keys = self._keys.sorted()
            # keys looked at together: halved at each that differs, doubled at each
            # stretch taken whole; where even a few differ at once, a few one by one
            size = _BLOCK
            while block := list(itertools.islice(keys, _BLOCK)):
                at = 0
                while at < len(block):
                    taken = m.take(block[at : at + size])
                    at += taken
                    if at == len(block) or taken == size:
                        size = min(_BLOCK, size * 2)
                        continue
                    alone = _FEW if not taken and size == _FEW else 1
                    for line in block[at : at + alone]:
                        m.one(line)
                    at += alone
                    size = max(_FEW, size // 2)
            m.finish()
        self._counts = m.counts
        self.times = [t.decode() for t in m.times]
        self.duplicates = m.duplicates
        self.duplicate_examples = [loc for _, loc in sorted(m.dups, reverse=True)]

    def _reuse(self) -> None:
        """What the merge would give when every URL is the one the last run had at the
        same input position: its shard, change time and line of the URL file, as the
        cache and the URL file keep them (copied: the run patches its own)."""
        assert self._urls is not None
        rec = self._cache_record
        if sum(r.lines for r in self.ranges) != self.count:
            raise RuntimeError("a reused run staged URLs outside its ranges")
        assert self._cache is not None
        shutil.copyfile(self.path.parent / self._cache / "order", self.folder / "order")
        for name in ("removed", "added"):
            (self.folder / name).touch()
        assert rec is not None
        self.times = list(rec["times"])
        self.duplicates = rec["duplicates"]
        self.duplicate_examples = list(rec["examples"])
        self._counts["unchanged"] = self.count - self.duplicates

    def entries(self, rows: int) -> Iterator[bytes]:
        """The staged entry lines in input order (after :meth:`resolve`), ``rows`` at a
        time, each stretch joined (read at once: its bytes are the sizes' sum)."""
        sizes = self.sizes
        parts = iter(self._parts)
        fh: BinaryIO | None = None
        try:
            for lo in range(0, self.count, rows):
                want = sum(sizes[lo : lo + rows])
                pieces = []
                while want:
                    if fh is None:
                        part = next(parts, None)
                        if part is None:
                            raise RuntimeError(f"the run's entry lines end before entry {lo:,}")
                        fh = open(self.folder / part, "rb", buffering=0)  # noqa: SIM115
                    piece = fh.read(want)
                    if not piece:
                        fh.close()
                        fh = None
                        continue
                    pieces.append(piece)
                    want -= len(piece)
                yield pieces[0] if len(pieces) == 1 else b"".join(pieces)
            if (fh is not None and fh.read(1)) or any(
                (self.folder / part).stat().st_size for part in parts
            ):
                raise RuntimeError("the run's entry lines go on past the last entry")
        finally:
            if fh is not None:
                fh.close()

    def old_shard(self, n: int) -> tuple[bytes, str] | None:
        row = self.db.execute("SELECT digest, changed FROM shards WHERE n=?", (n,)).fetchone()
        return None if row is None else (row[0], row[1])

    def published(self, n: int) -> tuple[str, str, str] | None:
        """The file shard ``n`` was published as by the last run: its name, the digest of
        its bytes and how it was compressed (see :meth:`commit`); ``None``: not known."""
        q = "SELECT name, digest, how FROM published WHERE n=?"
        row = self.db.execute(q, (n,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def counts(self) -> dict[str, int]:
        """URLs of this run by status (added, changed, unchanged) and URLs removed since
        the last (after :meth:`resolve`)."""
        return dict(self._counts)

    def _lines(self, name: str) -> Iterator[tuple[str]]:
        with open(self.folder / name, "rb") as fh:
            yield from ((line[:-1].decode(),) for line in fh)

    def _write_urls(self) -> None:
        """Complete the new URL file: if this run assigned shards (flag ``PLACED``), every
        line's shard field is set from :attr:`shards`; synced. A run that reused the last
        one and moved no URL keeps the last run's file (it is the same)."""
        fl = bytes(self.flags)
        placed = len(fl.translate(None, _PLACED_FLAGS)) != len(fl)
        if self._reusing:
            assert self._urls is not None
            if not placed:
                self._new = self._urls
                return
            shutil.copyfile(self.path.parent / self._urls, self.path.parent / self._new)
        with open(self.path.parent / self._new, "r+b") as fh:
            if placed:
                self._set_shards(fh.fileno())
            os.fsync(fh.fileno())  # on disk before the state names it

    def _set_shards(self, fd: int) -> None:
        """Write each line's shard field of the new URL file: the shard of its URL, whose
        input position the column ``order`` (written by the merge) gives line by line.

        256 KiB of lines at a time, at C speed: split at TABs (a line is ``loc, shard,
        fp, content, changed``, so every fourth field from the second is a shard, the
        newline inside the field after the change time), the fields replaced, joined.
        """
        get = self.shards.__getitem__
        size, at = os.fstat(fd).st_size, 0
        with open(self.folder / "order", "rb") as order:
            while at < size:
                want = _REWRITE
                while (cut := (data := os.pread(fd, want, at)).rfind(b"\n") + 1) == 0:
                    want *= 2  # a line longer than that
                fields = data[:cut].split(b"\t")
                n = len(fields) // 4
                seqs = array("I", order.read(4 * n))
                if len(fields) != 4 * n + 1 or len(seqs) != n:
                    raise RuntimeError(f"the new URL file does not match its order at byte {at:,}")
                shards = array("I", map(get, seqs))
                if sys.byteorder == "little":
                    shards.byteswap()
                hexes = shards.tobytes().hex().encode()
                fields[1::4] = [hexes[k : k + 8] for k in range(0, 8 * n, 8)]
                os.pwrite(fd, b"\t".join(fields), at)
                at += cut

    def commit(
        self,
        shards: dict[int, tuple[bytes, str]],
        now: str,
        files: dict[int, tuple[str, str, str]] | None = None,
    ) -> None:
        """Write this run's state: the new URL file, then, in the run's transaction, the
        removed URLs, the shards (the digest of their content and its change time), the
        files they were published as (``files``: name, digest of the file's bytes, how
        it was compressed; a next run whose shard is unchanged keeps that file) and the
        name of the URL file."""
        db = self.db
        try:
            self.prepare()
            name = self._new
            if self._counts["removed"]:
                db.executemany(
                    "INSERT OR REPLACE INTO removed(loc, at) VALUES (?, ?)",
                    ((loc, now) for (loc,) in self._lines("removed")),
                )
            if self._had_removed:
                db.executemany("DELETE FROM removed WHERE loc=?", self._lines("added"))
            cache = self._keep_cache()  # after the lines of removed and added URLs are read
            if cache is None:
                db.execute("DELETE FROM meta WHERE key IN ('cache', 'cache_ranges')")
            else:
                assert self.ranges_key is not None
                record: _CacheRecord = {
                    "format": _CACHE_FORMAT,
                    "key": self.ranges_key,
                    "ranges": [list(r) for r in self.ranges],
                    "times": self.times,
                    "duplicates": self.duplicates,
                    "examples": self.duplicate_examples,
                }
                db.executemany(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    [("cache", cache), ("cache_ranges", json.dumps(record))],
                )
            if self._legacy:
                db.execute("DELETE FROM urls")
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('urls', ?)", (name,))
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('last_run', ?)", (now,))
            if self.first:
                db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('first_run', ?)", (now,)
                )
            db.execute("DELETE FROM shards")
            db.executemany(
                "INSERT INTO shards(n, digest, changed) VALUES (?,?,?)",
                [(n, d, c) for n, (d, c) in shards.items()],
            )
            db.execute("DELETE FROM published")
            db.executemany(
                "INSERT INTO published(n, name, digest, how) VALUES (?,?,?,?)",
                [(n, *f) for n, f in (files or {}).items()],
            )
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('output', ?)", (self.key,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._urls = name
        _clear_url_files(self.path, keep=name)
        self._cache = cache
        _clear_caches(self.path, keep=cache)

    def _caching(self) -> bool:
        """Whether this run keeps a cache: its ranges cover all it staged."""
        return (
            self.ranges_key is not None
            and bool(self.ranges)
            and sum(r.lines for r in self.ranges) == self.count
        )

    def prepare(self) -> None:
        """Complete and sync the new URL file and what the cache keeps, once the shards are
        assigned (:meth:`commit` does it first if this was not called): it may run while
        the shard files are written, as nothing names these files yet."""
        if self._prepared:
            return
        self._write_urls()
        if self._caching():
            for m in self._maps:
                m.flush()
            for entry in self.folder.iterdir():
                if _cached(entry.name):
                    fd = os.open(entry, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
        self._prepared = True

    def _keep_cache(self) -> str | None:
        """Move the run folder's columns and entry lines (synced by :meth:`prepare`) to a
        cache folder for the next run (see the module docstring); its name, or ``None``
        when this run's ranges do not cover what it staged (then no cache is kept)."""
        if not self._caching():
            return None
        for entry in self.folder.iterdir():
            if not _cached(entry.name):
                if entry.is_dir():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        name = f"{self.path.name}.cache-{uuid.uuid4().hex[:12]}"
        self.folder.rename(self.path.parent / name)
        self.folder = self.path.parent / name
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)  # the rename, before the state names the folder
        finally:
            os.close(fd)
        return name

    def close(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        if self._urls != self._new:  # not committed: the state names the file it had
            (self.path.parent / self._new).unlink(missing_ok=True)
        self.db.close()
        self._close_columns()
        for view in self._views:
            view.release()
        for m in self._maps:
            m.close()
        self._views, self._maps = [], []
        if self.folder.name != self._cache:  # the run folder, not the cache it became
            shutil.rmtree(self.folder, ignore_errors=True)


def sort_keys(
    locs: list[bytes], fps: list[bytes], contents: list[bytes] | None, seq: int
) -> list[bytes]:
    """The sort keys of URLs staged from input position ``seq`` (see :meth:`StateStore.stage`).

    Loc, TAB, input position, fingerprint, content hash: a repeated loc sorts in input
    order, and TAB before any character a loc holds (a loc that is the start of another
    sorts first, as in SQLite).
    """
    at = range(seq, seq + len(locs))
    if contents is None:
        return list(map(b"%b\t%08x\t%b\t\n".__mod__, zip(locs, at, fps, strict=True)))
    return list(map(b"%b\t%08x\t%b\t%b\n".__mod__, zip(locs, at, fps, contents, strict=True)))


def changed_in_last_run(path: str | Path) -> Iterator[str]:
    """The URLs that the last run recorded in a state file added, changed or removed."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no state file {str(p)!r}")
    db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('last_run', 'urls')"))
        if "last_run" not in meta:
            return
        last = meta["last_run"]
        gone = (
            loc for (loc,) in db.execute("SELECT loc FROM removed WHERE at=? ORDER BY 1", (last,))
        )
        if "urls" not in meta:  # an earlier version's state: the URLs are in SQLite
            q = "SELECT loc FROM urls WHERE changed=? ORDER BY 1"
            changed: Iterator[str] = (loc for (loc,) in db.execute(q, (last,)))
            yield from heapq.merge(changed, gone)
            return
        end = b"\t" + last.encode() + b"\n"
        with open(p.parent / meta["urls"], "rb") as fh:
            changed = (line[: line.index(b"\t")].decode() for line in fh if line.endswith(end))
            yield from heapq.merge(changed, gone)  # a removed URL is in no URL file
    finally:
        db.close()


_FIELDS: Final = bytes.maketrans(b"\n", b"\t")  # lines to fields: one split of a block


def _first_other(a: list[bytes], b: list[bytes], n: int) -> int:
    """The first index where ``a`` and ``b`` differ, at C speed; ``n`` when none of the
    first ``n`` does."""
    return next(itertools.compress(itertools.count(), map(operator.ne, a, b)), n)


def _ints(hexes: list[bytes]) -> array[int]:
    """Fixed-width hex fields (8 digits) as integers, at C speed."""
    out = array("I", bytes.fromhex(b"".join(hexes).decode()))
    if sys.byteorder == "little":
        out.byteswap()
    return out


class _Merge:
    """The merge of the sorted keys with the stored URLs, which writes the new URL file.

    A block of keys whose URLs are the next stored ones, each with the same fingerprint
    and content hash (the common case: little changed), is taken at once (:meth:`alike`),
    and so is a block of new URLs after the last stored one (:meth:`added`); other keys
    one by one (:meth:`one`). Blocks are compared as fields (a key is ``loc, seq, fp,
    content``, a stored URL ``loc, shard, fp, content, changed``: one ``split`` of the
    block and slices, no pass per field). An unchanged URL's line goes to the new file as
    it was; the shard of each is as it stands, :meth:`StateStore.commit` patches those
    assigned later.
    """

    def __init__(
        self,
        st: StateStore,
        now: bytes,
        out: BinaryIO,
        order: BinaryIO,
        gone: BinaryIO,
        new: BinaryIO | None,
    ) -> None:
        self.st, self.now, self.out, self.order = st, now, out, order
        self.gone, self.new = gone, new
        self.stored = st._stored()
        self.ahead: list[bytes] = []  # stored lines read ahead, in order
        self.old = b""
        self.okey = b""
        self.prev = b""
        self.times: dict[bytes, int] = {now: 0}
        self.counts = {"added": 0, "changed": 0, "unchanged": 0, "removed": 0}
        self.duplicates = 0
        self.dups: list[tuple[int, str]] = []  # the first few repeats (seq negated)
        self._next()

    def _next(self) -> None:
        self.old = self.ahead.pop() if self.ahead else next(self.stored, b"")
        self.okey = self.old[: self.old.find(b"\t")]

    def _time(self, when: bytes) -> int:
        cid = self.times.get(when)
        if cid is None:
            cid = self.times[when] = len(self.times)
        return cid

    def take(self, block: list[bytes]) -> int:
        """Take the keys at the start of ``block`` that are alike (or all of it if it is
        added) at once; how many (0: take the first one by one)."""
        k = len(block)
        keys = b"".join(block)
        kf = keys.translate(_FIELDS).split(b"\t")
        if len(kf) != 4 * k + 1:
            return 0
        locs = kf[0 : 4 * k : 4]
        if locs[0] == self.prev or any(map(operator.eq, locs, itertools.islice(locs, 1, None))):
            return 0  # a repeated loc: one by one
        if self.old:
            return self.alike(block, kf)
        return self.added(block, keys, kf)

    def alike(self, block: list[bytes], kf: list[bytes]) -> int:
        """Take the keys at the start of ``block`` (its fields ``kf``) whose URLs are the
        next stored ones, unchanged; how many."""
        k = len(block)
        need = k - 1
        ahead = self.ahead[::-1]  # in order
        olds = [self.old, *ahead[:need]]
        olds += itertools.islice(self.stored, k - len(olds))
        j = len(olds)  # stored URLs to compare (fewer than k at the end)
        sf = b"".join(olds).translate(_FIELDS).split(b"\t")
        m = 0
        if len(sf) == 5 * j + 1:  # loc, fingerprint, content hash: the first that differs
            m = _first_other(kf[0 : 4 * j : 4], sf[0 : 5 * j : 5], j)
            m = _first_other(kf[2 : 4 * m : 4], sf[2 : 5 * m : 5], m)
            m = _first_other(kf[3 : 4 * m : 4], sf[3 : 5 * m : 5], m)
        if not m:
            self.ahead = (olds[1:] + ahead[need:])[::-1]  # put back (a stack)
            return 0
        st = self.st
        shards, cids = st.shards, st.cids
        seqs = _ints(kf[1 : 4 * m : 4])
        whens = sf[4 : 5 * m : 5]
        if whens.count(whens[0]) == m:
            cid = self._time(whens[0])
            for at, shard in zip(seqs, _ints(sf[1 : 5 * m : 5]), strict=False):
                shards[at] = shard
                cids[at] = cid
        else:
            time = self._time
            for at, shard, when in zip(seqs, _ints(sf[1 : 5 * m : 5]), whens, strict=False):
                shards[at] = shard
                cids[at] = time(when)
        self.out.write(b"".join(olds[:m]))
        seqs.tofile(self.order)
        self.counts["unchanged"] += m
        self.prev = kf[4 * m - 4]
        self.ahead = (olds[m:] + ahead[need:])[::-1]  # the rest, back
        self._next()
        return m

    def added(self, block: list[bytes], keys: bytes, kf: list[bytes]) -> int:
        """Take ``block`` (its bytes ``keys``, fields ``kf``): new URLs after the last
        stored one. Their lines are the keys with the change time; the seq stands where
        the shard goes, which :meth:`StateStore.commit` writes (each is assigned one).
        Their shard and change time stay 0 and 0 (now), as the columns were made; how
        many (all)."""
        k = len(block)
        rows = keys.replace(b"\n", b"\t" + self.now + b"\n")
        self.out.write(rows)
        _ints(kf[1 : 4 * k : 4]).tofile(self.order)
        self.counts["added"] += k
        if self.new is not None:
            self.new.write(b"\n".join(kf[0 : 4 * k : 4]) + b"\n")
        self.prev = kf[4 * k - 4]
        return k

    def one(self, line: bytes) -> None:
        """Take one key."""
        st, counts = self.st, self.counts
        tab = line.index(b"\t")
        key, seq = line[:tab], int(line[tab + 1 : tab + 9], 16)
        if key == self.prev:
            st.shards[seq] = DUPLICATE
            self.duplicates += 1
            item = (-seq, key.decode())
            if len(self.dups) < 10:
                heapq.heappush(self.dups, item)
            elif item > self.dups[0]:
                heapq.heapreplace(self.dups, item)
            return
        self.prev = key
        while self.old and self.okey < key:
            self._gone()
        old, when = self.old, self.now
        if old and self.okey == key:
            # the old line: loc, shard, fingerprint, content hash, change time
            st.shards[seq] = int(old[tab + 1 : tab + 9], 16)
            content = line[tab + 43 : -1]
            if content:
                same = content == old[tab + 43 : old.rindex(b"\t")]
            else:
                same = line[tab + 10 : tab + 42] == old[tab + 10 : tab + 42]
            if same:
                when = old[old.rindex(b"\t") + 1 : -1]
                st.cids[seq] = self._time(when)
                counts["unchanged"] += 1
            else:
                counts["changed"] += 1
            row = old if same and not content else old[: tab + 9] + line[tab + 9 : -1]
            if row is not old:
                row += b"\t" + when + b"\n"
            self._next()
        else:
            counts["added"] += 1
            if self.new is not None:
                self.new.write(key + b"\n")
            row = b"%b\t%08x%b\t%b\n" % (key, 0, line[tab + 9 : -1], when)
        self.out.write(row)
        self.order.write(seq.to_bytes(4, sys.byteorder))

    def _gone(self) -> None:
        self.gone.write(self.okey + b"\n")
        self.counts["removed"] += 1
        self._next()

    def finish(self) -> None:
        while self.old:
            self._gone()
