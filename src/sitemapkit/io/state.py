"""io: the state store of incremental runs, a SQLite file (WAL mode).

Per URL it remembers the shard it was written to, a fingerprint of its entry as
written (without lastmod), the page content's hash when the source gave one, and
the time that content last changed; per shard, the digest of its bytes and the
time they last changed. The meta table keeps the time of the first run (``first_run``):
a URL whose change time is still that one has not changed since the state began, so
its real change time is unknown (see :meth:`StateStore.baseline`). A run stages
everything in a temporary table and replaces the stored state in one transaction, so a
crash leaves either the old or the new state.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["OldUrl", "StateStore", "changed_in_last_run"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS urls(
    loc TEXT PRIMARY KEY, shard INTEGER NOT NULL, fp BLOB NOT NULL, content BLOB,
    changed TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shards(n INTEGER PRIMARY KEY, digest BLOB NOT NULL,
    changed TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS removed(loc TEXT PRIMARY KEY, at TEXT NOT NULL);
"""
_RUN = """
CREATE TEMP TABLE run(
    seq INTEGER PRIMARY KEY, loc TEXT NOT NULL UNIQUE, shard INTEGER, entry BLOB NOT NULL,
    size INTEGER NOT NULL, ns INTEGER NOT NULL, news INTEGER NOT NULL, fp BLOB NOT NULL,
    content BLOB, changed TEXT NOT NULL, status TEXT NOT NULL);
CREATE INDEX temp.run_shard ON run(shard, seq);
"""


class OldUrl(NamedTuple):
    """What the previous run stored for a URL."""

    shard: int
    fp: bytes
    content: bytes | None
    changed: str


class StateStore:
    """One incremental run over a state file; see the module docstring."""

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
        self.db.executescript(_RUN)
        # One transaction for the whole run: the staging rows, then the replacement
        # of the stored state (committed at once by commit(), else rolled back).
        self.db.execute("BEGIN IMMEDIATE")

    def baseline(self, now: str) -> str | None:
        """The change time that means "unknown": the first run's time (``now`` on it).

        ``None`` for a state file written before the first run was recorded.
        """
        return now if self.first else self._baseline

    def old(self, loc: str) -> OldUrl | None:
        row = self.db.execute(
            "SELECT shard, fp, content, changed FROM urls WHERE loc=?", (loc,)
        ).fetchone()
        return None if row is None else OldUrl(*row)

    def stage(
        self,
        loc: str,
        shard: int | None,
        entry: bytes,
        ns: int,
        news: int,
        fp: bytes,
        content: bytes | None,
        changed: str,
        status: str,
    ) -> bool:
        """Record this run's entry for ``loc``; ``False`` if ``loc`` was already staged."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO run(loc, shard, entry, size, ns, news, fp, content, changed,"
            " status) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (loc, shard, entry, len(entry), ns, news, fp, content, changed, status),
        )
        return cur.rowcount == 1

    def shard_loads(self) -> Iterator[tuple[int, int, int, int, int]]:
        """(shard, ns, entries, bytes, news) per shard and namespace set, kept shards only."""
        yield from self.db.execute(
            "SELECT shard, ns, COUNT(*), SUM(size), SUM(news) FROM run WHERE shard IS NOT NULL"
            " GROUP BY shard, ns ORDER BY shard"
        )

    def members(self, shard: int | None) -> Iterator[tuple[int, bytes, int, int, int]]:
        """(seq, entry, size, ns, news) of a shard's rows (``None``: unassigned) in order."""
        if shard is None:
            q = "SELECT seq, entry, size, ns, news FROM run WHERE shard IS NULL ORDER BY seq"
            yield from self.db.execute(q)
        else:
            q = "SELECT seq, entry, size, ns, news FROM run WHERE shard=? ORDER BY seq"
            yield from self.db.execute(q, (shard,))

    def assign(self, seq: int, shard: int | None) -> None:
        self.db.execute("UPDATE run SET shard=? WHERE seq=?", (shard, seq))

    def old_shard(self, n: int) -> tuple[bytes, str] | None:
        row = self.db.execute("SELECT digest, changed FROM shards WHERE n=?", (n,)).fetchone()
        return None if row is None else (row[0], row[1])

    def counts(self) -> dict[str, int]:
        """URLs of this run by status (new, changed, same) and URLs removed since the last."""
        out = dict(self.db.execute("SELECT status, COUNT(*) FROM run GROUP BY status").fetchall())
        removed = self.db.execute(
            "SELECT COUNT(*) FROM urls WHERE loc NOT IN (SELECT loc FROM run)"
        ).fetchone()[0]
        return {
            "added": out.get("new", 0),
            "changed": out.get("changed", 0),
            "unchanged": out.get("same", 0),
            "removed": removed,
        }

    def commit(self, shards: dict[int, tuple[bytes, str]], now: str) -> None:
        """Replace the stored state with this run's, in one transaction."""
        db = self.db
        try:
            db.execute(
                "INSERT OR REPLACE INTO removed(loc, at) SELECT loc, ? FROM urls"
                " WHERE loc NOT IN (SELECT loc FROM run)",
                (now,),
            )
            db.execute("DELETE FROM removed WHERE loc IN (SELECT loc FROM run)")
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('last_run', ?)", (now,))
            if self.first:
                db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('first_run', ?)", (now,)
                )
            db.execute("DELETE FROM urls")
            db.execute(
                "INSERT INTO urls(loc, shard, fp, content, changed)"
                " SELECT loc, shard, fp, content, changed FROM run"
            )
            db.execute("DELETE FROM shards")
            db.executemany(
                "INSERT INTO shards(n, digest, changed) VALUES (?,?,?)",
                [(n, d, c) for n, (d, c) in shards.items()],
            )
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('output', ?)", (self.key,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self.db.close()


def changed_in_last_run(path: str | Path) -> Iterator[str]:
    """The URLs that the last run recorded in a state file added, changed or removed."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no state file {str(p)!r}")
    db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key='last_run'").fetchone()
        if row is None:
            return
        yield from (
            loc
            for (loc,) in db.execute(
                "SELECT loc FROM urls WHERE changed=? UNION SELECT loc FROM removed WHERE at=?"
                " ORDER BY 1",
                (row[0], row[0]),
            )
        )
    finally:
        db.close()
