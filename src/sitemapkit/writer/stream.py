"""writer: the streaming mode. URLs in, in order; shards, the index and a publish out.

Nothing is kept but the current shard and the loc hashes (see :mod:`.dedupe`); the
forked path (:mod:`.parallel`) hands in whole shards written elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ..core.model import Url
from ..core.serialize import EntryBlock
from ..io.files import Publisher, ShardFile
from . import dedupe
from .index import publish, refuse_many
from .result import FileInfo, WriteResult
from .settings import Settings
from .shard import Shards

__all__ = ["StreamRun"]


class StreamRun:
    """One streaming run into ``s.directory``; its outcome goes into ``result``."""

    def __init__(self, s: Settings, result: WriteResult) -> None:
        self.s = s
        self.result = result
        self._publisher: Publisher | None = None
        self.shards = Shards(s, self.stage)
        self.hashes = dedupe.HashRuns(lambda: self.stage(".hashes"))
        self._dropped_ext = 0

    def stage(self, name: str) -> Path:
        """The staging path of ``name``, creating the staging folder."""
        if self._publisher is None:
            self._publisher = Publisher(self.s.directory, self.s.name, self.s.owned)
        return self._publisher.stage(name)

    @property
    def fresh(self) -> bool:
        """Nothing added yet."""
        return not self.shards.writing and not self.shards.files

    def add(self, url: Url | str, content_hash: str | None = None) -> None:
        url = self.s.url(url)
        text, ns, news, key = self.s.entry(url)
        if self.s.txt and (url.images or url.videos or url.news or url.alternates):
            self._dropped_ext += 1
        lastmod = None if self.s.txt or url.lastmod is None else str(url.lastmod)
        self.shards.put(text.encode(), ns, news, lastmod)
        self.hashes.note([key])

    def add_block(self, block: EntryBlock) -> None:
        self.hashes.extend(block.hashes)
        self.shards.add_block(block)

    def adopt(
        self,
        path: Path,
        count: int,
        raw: int,
        stored: int,
        run: dedupe.Run,
        latest: str | None = None,
    ) -> None:
        """Take a shard that a forked process wrote completely at ``path``.

        ``run`` is :func:`.dedupe.hash_run` of its loc hashes, made in that process;
        ``latest`` the latest lastmod of its entries.
        """
        expected = self.stage(self.s.shard_name(len(self.shards.files) + 1))
        if self.shards.writing or path != expected:
            raise RuntimeError("shards must be adopted in order, before anything is added")
        f = ShardFile(path, gzip=self.s.gzip, level=self.s.gzip_level)
        f.raw_bytes, f.stored_bytes = raw, stored
        self.shards.files.append(f)
        self.shards.counts.append(count)
        self.shards.latest.append(latest)
        self.hashes.append(run)

    def drop_adopted(self) -> None:
        """Delete every adopted shard and forget it and its hashes: fresh again."""
        if self.shards.writing or self.hashes.pending():
            raise RuntimeError("only adopted shards can be dropped")
        for f in self.shards.files:
            f.path.unlink(missing_ok=True)
        self.shards.files.clear()
        self.shards.counts.clear()
        self.shards.latest.clear()
        if self._publisher is not None:
            self.hashes.clear()

    def abort(self) -> None:
        self.shards.stop()
        if self._publisher is not None:
            self._publisher.abort()

    def finish(self) -> None:
        s, result = self.s, self.result
        self.shards.finish()
        files, counts = self.shards.files, self.shards.counts
        # a shard's index lastmod: the latest of its entries' (after duplicates are
        # dropped it may be a dropped entry's, later than the kept ones': never stale)
        latest = {id(f): lm for f, lm in zip(files, self.shards.latest, strict=True)}
        suspects = self.hashes.repeated()
        if suspects:
            files, counts, result.duplicates = dedupe.drop_duplicates(
                s, self.stage, files, counts, suspects, result.duplicate_examples
            )
        assert self._publisher is not None
        kind: Literal["urlset", "text"] = "text" if s.txt else "urlset"
        names = [f.path.name for f in files]
        single = len(names) == 1 and s.index != "always"
        refuse_many(s, len(names))
        if single:
            files[0].path.rename(self.stage(s.single_name))
            names = [s.single_name]
        infos = [
            FileInfo(n, kind, c, f.raw_bytes, f.stored_bytes)
            for n, c, f in zip(names, counts, files, strict=True)
        ]
        lastmods = {
            n: lm for n, f in zip(names, files, strict=True) if (lm := latest[id(f)]) is not None
        }
        if self._dropped_ext:
            result.notes.append(
                f"{self._dropped_ext} URLs carried images, videos, news or alternates, "
                "which a text sitemap cannot hold; only their locs were written"
            )
        publish(s, self._publisher, result, infos, lastmods, single=single)
