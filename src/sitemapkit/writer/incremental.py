"""writer: the incremental mode (a state file). URLs keep their shard and true lastmod.

Every URL is staged in the state store; at the end shards are assigned (a URL stays
in the shard it was in while that shard fits, by :func:`sitemapkit.core.split.fits`),
each shard is written whole, and a shard whose bytes did not change keeps its lastmod
in the index (and its file, untouched, on publish).

The run's time is a change time only for a change this state saw: a page new or changed
since an earlier run. The first run has seen no change, so a page without a lastmod of
its own gets none (not the build time, which every page would share: SM306; a built
file's modification time is its build's too), and stays without one until it changes;
a shard's index lastmod on the first run is the latest of its entries', as without a
state file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import unquote

from ..core.model import Url
from ..core.serialize import url_entry
from ..core.split import fits
from ..core.urls import Origin
from ..errors import InputError
from ..io.files import Publisher, ShardFile
from ..io.state import StateStore
from .index import Latest, publish, refuse_many
from .result import FileInfo, WriteResult
from .settings import Settings

__all__ = ["IncrementalRun"]

#: A shard's load while shards are assigned: [entries, entry bytes, news, namespaces].
_Load = list[int]


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

    def _content(self, url: Url, given: str | None) -> bytes | None:
        """The page content's hash: given by the source, or hashed from ``content_from``."""
        if given is not None:
            return _digest(given.encode())
        root = self.s.content_from
        if root is None:
            return None
        path = unquote(Origin.of(url.loc).path[len(self.s.origin.path) :])
        for cand in (root / path, root / path / "index.html", root / (path + ".html")):
            if cand.is_file() and root.resolve() in cand.resolve().parents:
                return _digest(cand.read_bytes())
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
        bare, _ = url_entry(url, keep_deprecated=s.keep_deprecated, lastmod=None)
        fp = _digest(bare.encode())
        content = self._content(url, content_hash)
        old = self._state.old(url.loc)
        if old is None:
            changed, status = s.now, "new"
        else:
            same = content == old.content if content is not None else fp == old.fp
            changed, status = (old.changed, "same") if same else (s.now, "changed")
        known = changed != self._state.baseline(s.now)
        stamp = str(url.lastmod) if url.lastmod is not None else changed if known else None
        text, ns = url_entry(url, keep_deprecated=s.keep_deprecated, lastmod=stamp)
        news = 1 if url.news is not None else 0
        shard = old.shard if old is not None else None
        data = text.encode()
        if not self._state.stage(url.loc, shard, data, ns, news, fp, content, changed, status):
            self.result.duplicates += 1
            if len(self.result.duplicate_examples) < 10:
                self.result.duplicate_examples.append(url.loc)

    def _fits(self, load: _Load, size: int, ns: int, news: int) -> bool:
        count, nbytes, nnews, nns = load
        return fits(
            self.s.limits,
            count=count + 1,
            size=nbytes + size,
            news=nnews + news,
            head=len(self.s.header(nns | ns).encode()),
            tail=self._tail,
        )

    @staticmethod
    def _take(load: _Load, size: int, ns: int, news: int) -> None:
        load[0] += 1
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
        st = self._state
        kept = sorted({n for n, *_ in st.shard_loads()})
        moves: list[tuple[int, int | None]] = []
        loads: dict[int, _Load] = {}
        for n in kept:
            load = [0, 0, 0, 0]
            for seq, _, size, ns, news in st.members(n):
                if self._fits(load, size, ns, news):
                    self._take(load, size, ns, news)
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
                        f"{self.s.limits.bytes:,} bytes",
                        hint="raise --max-bytes or shorten the entry",
                    )
            self._take(load, size, ns, news)
            loads[current] = load
            placed.append((seq, current))
        for seq, shard in placed:
            st.assign(seq, shard)
        return {n: ld[3] for n, ld in loads.items() if ld[0]}

    def _write_shard(self, n: int, name: str, ns: int) -> tuple[FileInfo, bytes, str | None]:
        """Write shard ``n`` whole as ``name``; its file info, the digest of its bytes and
        the latest lastmod of its entries."""
        assert self._publisher is not None
        f = ShardFile(self._publisher.stage(name), gzip=self.s.gzip, level=self.s.gzip_level)
        f.open()
        digest = hashlib.blake2b(digest_size=16)
        count = 0
        latest = Latest()
        parts = [self.s.header(ns).encode()]
        for _, entry, _, _, _ in self._state.members(n):
            # "<url><loc>…</loc><lastmod>…</lastmod>": the loc is escaped, so holds no "<"
            at = entry.find(b"</loc><lastmod>") + 15
            if at > 14:
                latest.add(entry[at : entry.index(b"<", at)].decode())
            parts.append(entry)
            count += 1
            if len(parts) >= 4096:
                chunk = b"".join(parts)
                digest.update(chunk)
                f.write(chunk)
                parts = []
        parts.append(self.s.footer)
        chunk = b"".join(parts)
        digest.update(chunk)
        f.write(chunk)
        f.close()
        info = FileInfo(name, "urlset", count, f.raw_bytes, f.stored_bytes)
        return info, digest.digest(), latest.value

    def finish(self) -> None:
        s, st, result = self.s, self._state, self.result
        if self._publisher is None:
            self._publisher = Publisher(s.directory, s.name, s.owned)
        shard_ns = self._assign_shards()
        numbers = sorted(shard_ns)
        single = len(numbers) <= 1 and s.index != "always"
        shard_state: dict[int, tuple[bytes, str]] = {}
        infos: list[FileInfo] = []
        lastmods: dict[str, str] = {}
        for n in numbers or [1]:
            name = s.single_name if single else s.shard_name(n)
            info, d, latest = self._write_shard(n, name, shard_ns.get(n, 0))
            old = st.old_shard(n)
            if old is not None and old[0] == d:
                changed = old[1]
            else:
                result.rewritten.append(name)
                # "": no change seen and no entry with a lastmod (no index lastmod)
                changed = (latest or "") if st.first else s.now
            shard_state[n] = (d, changed)
            if changed:
                lastmods[name] = changed
            infos.append(info)
        refuse_many(s, 1 if single else len(numbers))
        result.changes = st.counts()

        def commit() -> None:
            # Once the new index is live, not before: a run killed before that leaves the
            # old state with the old set, so the next run sees (and reports, and
            # `submit --changed-since` sends) the same changes again.
            st.commit(shard_state, s.now)
            st.close()

        publish(s, self._publisher, result, infos, lastmods, single=single, committed=commit)

    def abort(self) -> None:
        self._state.close()
        if self._publisher is not None:
            self._publisher.abort()
