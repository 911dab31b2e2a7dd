"""writer: the incremental mode (a state file). URLs keep their shard and true lastmod.

Every URL is staged in the state store (a whole plain input file by two forked
processes, :meth:`IncrementalRun.add_plain_file`, which take what did not change since
the last run from the state's cache); at the end shards are assigned (a URL stays in the
shard it was in while that shard fits, by :func:`sitemapkit.core.split.fits`), and one
pass over the staged entries gives each shard's digest. A shard whose bytes did not
change keeps its lastmod in the index, and its live file is kept as it is, neither
formatted nor staged (:meth:`~sitemapkit.io.files.Publisher.keep`, checked against the
digest of the file's bytes that the state recorded); the others are written whole in a
second pass, by two forked processes when there are two or more (on a first run, every
shard, measured by this process while they are written).

The run's time is a change time only for a change this state saw: a page new or changed
since an earlier run. The first run has seen no change, so a page without a lastmod of
its own gets none (not the build time, which every page would share: SM306; a built
file's modification time is its build's too), and stays without one until it changes;
a shard's index lastmod on the first run is the latest of its entries', as without a
state file.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import operator
import os
import re
from array import array
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, cast
from urllib.parse import unquote

from .. import __version__
from ..core.model import Url
from ..core.serialize import EntryBlock, url_entry
from ..core.split import fits
from ..core.urls import Origin, unescape
from ..core.w3cdate import written
from ..errors import InputError
from ..io import child
from ..io.child import Child, ChildError
from ..io.files import GZIP_BACKEND, Publisher, ShardFile, file_digest
from ..io.sources import PlainFile, Progress
from ..io.state import DUPLICATE, NEWS, NS, OWN, PLACED, StateStore
from .index import Latest, publish, refuse_many
from .result import FileInfo, WriteResult
from .settings import Settings
from .stage import Made, stage_plain_file

__all__ = ["IncrementalRun"]

#: A shard's load while shards are assigned: [entries, entry bytes, news, namespaces].
_Load = list[int]


_LOC: Final = re.compile(rb"<url><loc>([^<]*)</loc>")
_LASTMOD: Final = re.compile(rb"</loc><lastmod>[^<]*</lastmod>")
_LATEST: Final = re.compile(rb"</loc><lastmod>([^<]*)</lastmod>")


_RANGE: Final = 4096  # rows looked at together while shards are assigned


_FINGERPRINT: Final = functools.partial(hashlib.blake2b, digest_size=16)
_hex: Final = operator.methodcaller("hexdigest")
_OPEN: Final = 32  # shard files written at a time (a deflate state each)
_WRITERS: Final = 2  # forked shard writers
#: The flag bytes that have OWN (deleted by ``translate``: what is left has none).
_OWN_FLAGS: Final = bytes(f for f in range(256) if f & OWN)


@dataclass(slots=True)
class _Measure:
    """A shard before it is written: its header, the digest of its bytes, its latest
    lastmod, entries, raw bytes and (once published or kept) stored bytes."""

    head: bytes
    digest: hashlib.blake2b
    latest: Latest
    count: int = 0
    raw: int = 0
    stored: int = 0


class _Cancelled(Exception):
    """A forked shard writer was ended while it wrote (its answer is not wanted)."""


def _ranges(count: int) -> Iterator[tuple[int, int]]:
    return ((lo, min(lo + _RANGE, count)) for lo in range(0, count, _RANGE))


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class IncrementalRun:
    """One run against ``state``; its outcome goes into ``result``."""

    def __init__(self, s: Settings, result: WriteResult, state: str | Path) -> None:
        if s.format != "xml":
            raise ValueError("a state file needs XML output (text sitemaps have no lastmod)")
        self.s = s
        self.result = result
        self._state = StateStore(state, key=f"{s.directory.resolve()} {s.base_url}")
        self._publisher: Publisher | None = None
        self._tail = len(s.footer)
        self._heads: dict[int, int] = {}  # a shard's header length by namespaces

    def _content(self, loc: str, given: str | None) -> str | None:
        """The page content's hash (hex): given by the source, or hashed from
        ``content_from``."""
        if given is not None:
            return _digest(given.encode()).hex()
        root = self.s.content_from
        if root is None:
            return None
        path = unquote(Origin.of(loc).path[len(self.s.origin.path) :])
        for cand in (root / path, root / path / "index.html", root / (path + ".html")):
            if cand.is_file() and root.resolve() in cand.resolve().parents:
                return _digest(cand.read_bytes()).hex()
        return None

    def add(self, url: Url | str, content_hash: str | None = None) -> None:
        """Record one URL.

        Its lastmod, when the input gives none, is the time its content last changed:
        the content hash (from the source or ``content_from``) when there is one, else
        the entry as written; "now" only for pages new or changed since an earlier run,
        none while the change time is unknown (see the module docstring).
        """
        s = self.s
        url = s.url(url)
        s.check_loc(url.loc)
        text, ns = url_entry(url, keep_deprecated=s.keep_deprecated)
        entry = text.encode()
        flags = ns | (NEWS if url.news is not None else 0)
        bare = entry
        if url.lastmod is not None:
            # the fingerprint is of the entry without its lastmod, which follows the loc
            flags |= OWN
            at = entry.index(b"</loc>") + 6
            bare = entry[:at] + entry[entry.index(b"</lastmod>", at) + 10 :]
        content = self._content(url.loc, content_hash)
        self._state.stage_one(url.loc, entry, _digest(bare).hex(), content, flags)

    def add_block(self, block: EntryBlock) -> None:
        """Record the entry lines of a block of plain rows (the fast path of plain inputs)."""
        self._state.stage(*self._made(block))

    def _made(self, block: EntryBlock) -> Made:
        """What :meth:`StateStore.stage` takes for a block: locs, entry lines,
        fingerprints, content hashes and flags."""
        data = block.data
        entries = data.splitlines(keepends=True)
        locs = _LOC.findall(data)
        if b"&" in data:
            locs = unescape(b"\n".join(locs).decode()).encode().split(b"\n")
        own = block.lastmods is not None
        bare = _LASTMOD.sub(b"</loc>", data).splitlines(keepends=True) if own else entries
        fps = list(map(str.encode, map(_hex, map(_FINGERPRINT, bare))))
        contents = None
        if self.s.content_from is not None:
            found = (self._content(loc.decode(), None) for loc in locs)
            contents = [(c or "").encode() for c in found]
        lastmods = block.lastmods
        if lastmods is not None and b"" in lastmods:  # some entries without one
            flags = bytes(OWN if v else 0 for v in lastmods)
        else:
            flags = bytes((OWN if own else 0,)) * len(entries)
        return locs, entries, fps, contents, flags

    def add_plain_file(self, source: PlainFile, progress: Progress | None = None) -> bool:
        """Stage a whole plain input file in two forked processes (:mod:`.stage`): there
        the entry lines, fingerprints and sort keys are made as :meth:`add_block` makes
        them, here they are staged in order. ``False``, nothing staged, when it does not
        suit: the caller adds the lines.

        The ranges are kept for the next run under a key of all that the entry lines
        and fingerprints depend on besides the input bytes (not with ``content_from``,
        whose pages may change while the input does not)."""
        s, f = self.s, source.formatter
        key = None
        if s.content_from is None:
            key = " ".join(
                map(
                    str,
                    (__version__, f.base, f.columns, f.txt, s.keep_deprecated, s.check_location),
                )
            )
        return stage_plain_file(self._state, self._made, source, progress, key)

    def _fits(self, load: _Load, size: int, ns: int, news: int, k: int = 1) -> bool:
        """Whether ``k`` more entries of ``size`` bytes in all fit in a shard of ``load``."""
        count, nbytes, nnews, nns = load
        head = self._heads.get(nns | ns)
        if head is None:
            head = self._heads[nns | ns] = len(self.s.header(nns | ns).encode())
        return fits(
            self.s.limits,
            count=count + k,
            size=nbytes + size,
            news=nnews + news,
            head=head,
            tail=self._tail,
        )

    @staticmethod
    def _take(load: _Load, size: int, ns: int, news: int, k: int = 1) -> None:
        load[0] += k
        load[1] += size
        load[2] += news
        load[3] |= ns

    def _assign_shards(self) -> dict[int, int]:
        """Keep every URL in its shard while it fits; place the others.

        Assignment (documented): a URL stays in the shard it was in; a shard that no
        longer fits loses its last entries; new and displaced URLs fill the highest
        shard that has room, in input order, then new shards numbered after it.
        Returns the namespaces of every shard that holds entries, by number.
        """
        st, s, result = self._state, self.s, self.result
        st.resolve(s.now)
        result.duplicates += st.duplicates
        room = max(0, 10 - len(result.duplicate_examples))
        result.duplicate_examples.extend(st.duplicate_examples[:room])
        base = st.baseline(s.now)
        # the lastmod element of an entry without its own, by change time ("": unknown)
        self._stamps = [
            b"" if t == base else b"<lastmod>%b</lastmod>" % written(t).encode() for t in st.times
        ]
        self._extra = [len(x) for x in self._stamps]
        shards, flags = st.shards, st.flags
        loads: dict[int, _Load] = {}
        for lo, hi in _ranges(st.count):
            for seq, n, size, fl in self._rows(lo, hi, kept=True):
                k = hi - lo if seq < 0 else 1
                load = loads.setdefault(n, [0, 0, 0, 0])
                ns, news = fl & NS, k if fl & NEWS else 0
                if self._fits(load, size, ns, news, k):
                    self._take(load, size, ns, news, k)
                elif seq >= 0:
                    shards[seq] = 0  # displaced: placed with the new URLs below
                else:  # the range does not fit as a whole: row by row
                    self._kept_one_by_one(loads, lo, hi)
        current = max(loads, default=1)
        load = loads.setdefault(current, [0, 0, 0, 0])
        for lo, hi in _ranges(st.count):
            for seq, _, size, fl in self._rows(lo, hi, kept=False):
                k = hi - lo if seq < 0 else 1
                ns, news = fl & NS, k if fl & NEWS else 0
                if seq < 0 and self._fits(load, size, ns, news, k):
                    self._take(load, size, ns, news, k)
                    shards[lo:hi] = array("i", [current]) * k
                    flags[lo:hi] = bytes((fl | PLACED,)) * k
                    continue
                rows = (
                    self._rows(lo, hi, kept=False, whole=False) if seq < 0 else [(seq, 0, size, fl)]
                )
                for row, _, size, fl in rows:
                    ns, news = fl & NS, 1 if fl & NEWS else 0
                    if not self._fits(load, size, ns, news):
                        current = max(current + 1, max(loads, default=0) + 1)
                        load = loads.setdefault(current, [0, 0, 0, 0])
                        if not self._fits(load, size, ns, news):
                            raise InputError(
                                f"one entry is {size:,} bytes, more than fits in a sitemap of "
                                f"{self.s.limits.bytes:,} bytes",
                                hint="raise --max-bytes or shorten the entry",
                            )
                    self._take(load, size, ns, news)
                    shards[row] = current
                    flags[row] = fl | PLACED
        return {n: ld[3] for n, ld in loads.items() if ld[0]}

    def _kept_one_by_one(self, loads: dict[int, _Load], lo: int, hi: int) -> None:
        st = self._state
        for seq, n, size, fl in self._rows(lo, hi, kept=True, whole=False):
            load = loads.setdefault(n, [0, 0, 0, 0])
            news = 1 if fl & NEWS else 0
            if self._fits(load, size, fl & NS, news):
                self._take(load, size, fl & NS, news)
            else:
                st.shards[seq] = 0

    def _rows(
        self, lo: int, hi: int, *, kept: bool, whole: bool = True
    ) -> Iterator[tuple[int, int, int, int]]:
        """(seq, shard, size, flags) of the rows ``lo:hi`` in a shard (``kept``) or in
        none yet; size with the lastmod an entry gets.

        When ``whole`` and every row of the range is alike (one shard, the same flags
        and change time), one row stands for them all: seq ``-lo - 1``, their total
        size, and the caller counts ``hi - lo`` entries (or asks again, not whole).
        """
        st = self._state
        shards, flags, sizes, cids, extra = st.shards, st.flags, st.sizes, st.cids, self._extra
        if whole and hi - lo > 1:
            sh, fls = shards[lo:hi].tolist(), bytes(flags[lo:hi])
            n, f = sh[0], fls[0]
            if (n > 0) == kept and n >= 0 and sh.count(n) == len(sh) and fls.count(f) == len(fls):
                cl = cids[lo:hi].tolist()
                if f & OWN or cl.count(cl[0]) == len(cl):
                    total = sum(sizes[lo:hi]) + (0 if f & OWN else extra[cl[0]] * (hi - lo))
                    yield -lo - 1, n, total, f
                    return
        for seq in range(lo, hi):
            n = shards[seq]
            if n > 0 if kept else n == 0:
                fl = flags[seq]
                yield seq, n, sizes[seq] + (0 if fl & OWN else extra[cids[seq]]), fl

    def _pieces(self, wanted: Container[int] | None = None) -> Iterator[tuple[int, bytes, int]]:
        """The final entry lines of the shards (``wanted``: of these only), in input order
        within each: (shard, lines, how many), a range of rows at a time."""
        st = self._state
        shards, cids, flags, stamps = st.shards, st.cids, st.flags, self._stamps
        for (lo, hi), chunk in zip(_ranges(st.count), st.entries(_RANGE), strict=True):
            sh = shards[lo:hi].tolist()
            n = sh[0]
            if n > 0 and sh.count(n) == len(sh):  # one shard's
                if wanted is not None and n not in wanted:
                    continue
                fls = bytes(flags[lo:hi])
                if not fls.translate(None, _OWN_FLAGS):  # every entry as staged
                    yield n, chunk, hi - lo
                    continue
                cl = cids[lo:hi].tolist()
                ids = set(cl)
                if not any(map(stamps.__getitem__, ids)):
                    # no entry takes a lastmod from its change time (each unknown, as on a
                    # first run): every entry as staged, whichever have lastmods of their own
                    yield n, chunk, hi - lo
                    continue
                if len(ids) == 1 and len(fls.translate(None, _OWN_FLAGS)) == len(fls):
                    # none with a lastmod of its own, one change time: one stamp for all
                    # (``</loc>`` ends the loc of an entry only: other locs are prefixed)
                    yield n, chunk.replace(b"</loc>", b"</loc>" + stamps[cl[0]]), hi - lo
                    continue
            lines = chunk.splitlines(keepends=True)
            if len(lines) != hi - lo:  # an entry line holding a newline: escape() sees to that
                raise AssertionError(f"entries {lo:,}-{hi:,} are {len(lines):,} lines")
            groups: dict[int, list[bytes]] = {}
            for seq, entry in enumerate(lines, lo):
                n = shards[seq]
                if n == DUPLICATE or (wanted is not None and n not in wanted):
                    continue
                line = entry
                if not flags[seq] & OWN:
                    stamp = stamps[cids[seq]]
                    if stamp:
                        at = entry.index(b"</loc>") + 6
                        line = entry[:at] + stamp + entry[at:]
                groups.setdefault(n, []).append(line)
            for n, group in groups.items():
                yield n, b"".join(group), len(group)

    def _measure(self, heads: dict[int, bytes]) -> dict[int, _Measure]:
        """Each shard's entries, raw bytes, digest of its bytes and (on a first run) the
        latest lastmod of its entries, without writing it (``heads``: its header)."""
        s, first = self.s, self._state.first
        out: dict[int, _Measure] = {}
        for n, head in heads.items():
            out[n] = _Measure(head, hashlib.blake2b(head, digest_size=16), Latest())
        for n, chunk, count in self._pieces():
            m = out[n]
            m.digest.update(chunk)
            if first:
                m.latest.add_all(_LATEST.findall(chunk))
            m.count += count
            m.raw += len(chunk)
        for m in out.values():
            m.digest.update(s.footer)
            m.raw += len(m.head) + len(s.footer)
        return out

    def _write_shards(
        self,
        names: dict[int, str],
        heads: dict[int, bytes],
        during: Callable[[], None] | None = None,
    ) -> dict[int, str]:
        """Write the shards ``names`` (number: staged name; ``heads``: their headers);
        returns the digest of each file's bytes. ``during`` runs in this process while
        they are written (before, when this process writes them).

        Two or more are written by two forked processes (:meth:`_write_forked`); a shard
        none of them wrote (no fork, a process gone) is written here, over whatever file
        a dead process left.
        """
        numbers = sorted(names)
        done = self._write_forked(numbers, names, heads, during) if len(numbers) > 1 else None
        if done is None:
            done = {}
            if during is not None:
                during()
        left = [n for n in numbers if n not in done]
        if left:
            done.update(self._write_files(left, names, heads))
        return {n: done[n] for n in numbers}

    def _write_forked(
        self,
        numbers: list[int],
        names: dict[int, str],
        heads: dict[int, bytes],
        during: Callable[[], None] | None,
    ) -> dict[int, str] | None:
        """The digests of the shards two forked processes wrote, every other number each
        (so both deflate about as many bytes), while this process runs ``during``;
        ``None`` (``during`` not run) when there is no fork.

        They inherit this run (the columns are maps of files, the entries a file, so a
        fork reads what this process staged) and write whole files in the staging area.
        A process that cannot be forked (another thread runs, no ``os.fork``, out of
        processes) or that ends without its answer (killed, out of memory, a crash)
        leaves its shards out of the result; an error it raised (a full disk) is raised
        here, once both are ended.
        """
        if (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
            return None

        def handle(share: list[int]) -> dict[int, str]:
            return self._write_files(share, names, heads, forked=True)

        workers: list[Child] = []
        done: dict[int, str] = {}
        try:
            with contextlib.suppress(ChildError, OSError):
                for _ in range(_WRITERS):
                    workers.append(Child.fork(handle, name="a shard writer process"))
            busy: list[Child] = []
            for k, worker in enumerate(workers):
                with contextlib.suppress(ChildError):  # gone already: its share is left
                    worker.send(numbers[k :: len(workers)])
                    busy.append(worker)
            if during is not None:
                during()
            while busy:
                for worker in child.ready(busy):
                    busy.remove(worker)
                    with contextlib.suppress(ChildError):  # its share is left
                        done.update(cast("dict[int, str]", worker.receive()))
        finally:
            child.close_all(workers, grace=10)
        return done

    def _write_files(
        self,
        numbers: list[int],
        names: dict[int, str],
        heads: dict[int, bytes],
        *,
        forked: bool = False,
    ) -> dict[int, str]:
        """Write the shards ``numbers``, at most :data:`_OPEN` at a pass over the entries;
        returns the digest of each file's bytes.

        ``forked``: in a forked writer, which syncs each file to the disk (the publish's
        sync of it is then quick) and stops once this process ends it.
        """
        assert self._publisher is not None
        s, out = self.s, {}
        for at in range(0, len(numbers), _OPEN):
            group = numbers[at : at + _OPEN]
            files: dict[int, ShardFile] = {}
            for n in group:
                f = files[n] = ShardFile(
                    self._publisher.stage(names[n]), gzip=s.gzip, level=s.gzip_level
                )
                f.open()
                f.write(heads[n])
            for n, chunk, _ in self._pieces(files):
                if forked and child.cancelled():
                    raise _Cancelled
                files[n].write(chunk)
            for n, f in files.items():
                f.write(s.footer)
                f.close(sync=forked)
                out[n] = file_digest(f.path)
        return out

    def finish(self) -> None:
        s, st, result = self.s, self._state, self.result
        if self._publisher is None:
            self._publisher = Publisher(s.directory, s.name, s.owned)
        publisher = self._publisher
        shard_ns = self._assign_shards()
        numbers = sorted(shard_ns)
        single = len(numbers) <= 1 and s.index != "always"
        refuse_many(s, 1 if single else len(numbers))
        heads = {n: s.header(ns).encode() for n, ns in (shard_ns or {1: 0}).items()}
        names = {n: s.single_name if single else s.shard_name(n) for n in heads}
        written: dict[int, str] | None = None
        if st.first:  # every shard is new: measured while they are written
            box: list[dict[int, _Measure]] = []

            def measure() -> None:
                box.append(self._measure(heads))
                st.prepare()

            written = self._write_shards(names, heads, measure)
            (measured,) = box
        else:
            measured = self._measure(heads)
        how = f"{s.gzip} {s.gzip_level} {GZIP_BACKEND}"
        shard_state: dict[int, tuple[bytes, str]] = {}
        stage: dict[int, str] = {}
        files: dict[int, tuple[str, str, str]] = {}
        lastmods: dict[str, str] = {}
        for n in numbers or [1]:
            m = measured[n]
            name = names[n]
            d = m.digest.digest()
            old = st.old_shard(n)
            if old is not None and old[0] == d:
                changed = old[1]
                # its file as the last run published it, if that is still live (the
                # check hook sees staged files: with one, every shard is staged)
                live = st.published(n)
                if (
                    not single
                    and s.check is None
                    and live is not None
                    and live[2] == how
                    and publisher.keep(name, live[0], s.ext, live[1])
                ):
                    files[n] = live
                    m.stored = (s.directory / live[0]).stat().st_size
                else:
                    stage[n] = name
            else:
                stage[n] = name
                # "": no change seen and no entry with a lastmod (no index lastmod)
                changed = (m.latest.value or "") if st.first else s.now
            shard_state[n] = (d, changed)
            if changed:
                lastmods[name] = changed
        if written is None:
            written = self._write_shards(stage, heads, st.prepare)
        elif written.keys() != stage.keys():  # a first run has no shard to keep
            raise AssertionError(f"a first run wrote {sorted(written)}, not {sorted(stage)}")
        for n, digest in written.items():
            files[n] = (names[n], digest, how)
            m = measured[n]
            m.stored = publisher.stage(names[n]).stat().st_size
        infos = [
            FileInfo(names[n], "urlset", m.count, m.raw, m.stored)
            for n, m in ((n, measured[n]) for n in numbers or [1])
        ]
        result.changes = st.counts()

        def commit() -> None:
            # Once the new index is live, not before: a run killed before that leaves the
            # old state with the old set, so the next run sees (and reports, and
            # `submit --changed-since` sends) the same changes again.
            final = {
                n: (f.name, *files[n][1:])
                for n, f in zip(numbers or [1], result.files, strict=False)
            }
            st.commit(shard_state, s.now, final)
            st.close()

        publish(s, publisher, result, infos, lastmods, single=single, committed=commit)

    def abort(self) -> None:
        self._state.close()
        if self._publisher is not None:
            self._publisher.abort()
