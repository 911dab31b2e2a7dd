"""io: files. Staged, atomic publishing and compressed sinks fed from a worker thread.

Output is written into a staging folder beside the target folder, then moved in
with ``os.replace`` (same file system, so each move is atomic): shards first, the
index last. Files whose bytes did not change are left alone (their mtime too).
Files of an earlier run that the new set no longer contains are removed only
after the new index is in place. Any failure before that removes the staging
folder and leaves the published files untouched.

Compression and file writes run on one background thread so that formatting
(the caller's thread) and deflate overlap on two cores; deflate and ``write``
release the GIL.
"""

from __future__ import annotations

import filecmp
import json
import os
import queue
import re
import shutil
import threading
import uuid
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO, Final

_fast_zlib: Any
try:  # optional extra "fast": zlib-ng deflates several times faster than zlib
    from zlib_ng import zlib_ng as _fast_zlib
except ImportError:  # pragma: no cover - depends on the environment
    _fast_zlib = None

__all__ = ["GZIP_BACKEND", "Publisher", "ShardFile", "Worker", "gzip_compressobj", "open_input"]

#: zlib-ng level 4 makes files within ~5 % of zlib level 6 at ~8x its speed
#: (bench/ figures); stdlib zlib stays at its default level 6.
GZIP_BACKEND: Final = "zlib-ng" if _fast_zlib is not None else "zlib"
_LEVEL: Final = 4 if _fast_zlib is not None else 6


def gzip_compressobj(level: int | None = None) -> Any:
    """A deflate object producing a gzip member with mtime 0 and no file name (reproducible)."""
    lib: Any = _fast_zlib if _fast_zlib is not None else zlib
    return lib.compressobj(_LEVEL if level is None else level, zlib.DEFLATED, 31)


class Worker:
    """One background thread running submitted jobs in order; errors resurface on the caller.

    The queue is bounded, so a fast producer waits instead of buffering without limit.
    """

    def __init__(self, depth: int = 4) -> None:
        self._q: queue.Queue[Callable[[], None] | None] = queue.Queue(depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sitemapkit-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            job = self._q.get()
            try:
                if job is None:
                    return
                if self._error is None:
                    job()
            except BaseException as exc:  # re-raised in the caller's thread
                self._error = exc
            finally:
                self._q.task_done()

    def submit(self, job: Callable[[], None]) -> None:
        self.check()
        self._q.put(job)

    def wait(self) -> None:
        """Block until every submitted job ran; re-raise the first failure."""
        self._q.join()
        self.check()

    def check(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def stop(self) -> None:
        self._q.put(None)
        self._thread.join()


class ShardFile:
    """A file being written: plain or gzip; counts raw and stored bytes.

    The thread that opens it owns it until it is closed: only that thread may write
    or close it (checked, so a file handed to the writer's worker thread is never
    written from another). Once closed, any thread may open it again.
    """

    def __init__(self, path: Path, *, gzip: bool, level: int | None = None) -> None:
        self.path = path
        self.gzip = gzip
        self.level = level
        self.raw_bytes = 0
        self.stored_bytes = 0
        self._fh: BinaryIO | None = None
        self._z: Any = None
        self._owner: int | None = None

    def _own(self) -> None:
        if self._owner != threading.get_ident():
            raise RuntimeError(f"{self.path.name} is written by the thread that opened it")

    def open(self) -> None:
        """Start (or restart) the file, empty; the calling thread owns it until closed."""
        if self._owner is not None:
            raise RuntimeError(f"{self.path.name} is open already")
        self._owner = threading.get_ident()
        self._fh = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._z = gzip_compressobj(self.level) if self.gzip else None
        self.raw_bytes = 0

    def write(self, data: bytes) -> None:
        self._own()
        assert self._fh is not None
        self.raw_bytes += len(data)
        self._fh.write(self._z.compress(data) if self._z is not None else data)

    def close(self) -> None:
        self._own()
        assert self._fh is not None
        if self._z is not None:
            self._fh.write(self._z.flush())
        self._fh.close()
        self._fh = None
        self._owner = None
        self.stored_bytes = self.path.stat().st_size

    def read_back(self) -> bytes:
        """The uncompressed content of a closed file (for the rare rewrite paths)."""
        data = self.path.read_bytes()
        return zlib.decompress(data, 47) if self.gzip else data


class Publisher:
    """Stages files beside ``target`` and swaps them in; see the module docstring.

    ``owned`` matches the names this publisher may delete when a new run no
    longer produces them (the writer's own naming scheme), never anything else.
    """

    def __init__(self, target: Path, owned: re.Pattern[str]) -> None:
        self.target = target
        self.owned = owned
        parent = target.parent if str(target.parent) else Path(".")
        parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{target.name}.sitemapkit-"
        _remove_dead_staging(parent, prefix)
        self.staging = parent / f"{prefix}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.staging.mkdir()

    def stage(self, name: str) -> Path:
        return self.staging / name

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def publish(self, files: Iterable[str], last: Iterable[str]) -> list[str]:
        """Move ``files`` then ``last`` into place; remove stale owned files; return them.

        A journal written first lets the next run finish a publish that a killed
        process left half done (see :func:`_remove_dead_staging`).
        """
        new = [*files, *last]
        journal = {"target": str(self.target), "files": new, "owned": self.owned.pattern}
        tmp = self.staging / ".publish.tmp"
        tmp.write_text(json.dumps(journal))
        os.replace(tmp, self.staging / _JOURNAL)
        removed = _complete(self.staging, self.target, new, self.owned)
        shutil.rmtree(self.staging, ignore_errors=True)
        return removed


_JOURNAL: Final = ".publish"


def _complete(staging: Path, target: Path, names: list[str], owned: re.Pattern[str]) -> list[str]:
    """Move the staged ``names`` into ``target`` in order, then remove stale owned files."""
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        src, dst = staging / name, target / name
        if not src.exists():
            continue  # moved before a crash
        if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
            src.unlink()  # unchanged: keep the published bytes and mtime
        else:
            os.replace(src, dst)
    keep = set(names)
    removed = []
    for entry in sorted(os.listdir(target)):
        if entry not in keep and owned.fullmatch(entry) and (target / entry).is_file():
            (target / entry).unlink()
            removed.append(entry)
    return removed


def _remove_dead_staging(parent: Path, prefix: str) -> None:
    """Clear staging folders left by writer processes that were killed.

    A folder whose publish had begun (its journal exists) is published to the
    end first, so the target holds the complete new set rather than a mix; any
    other is deleted, leaving the earlier set as it was.
    """
    for entry in parent.glob(prefix + "*"):
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive
        except ProcessLookupError:
            pass
        except PermissionError:  # alive, owned by someone else
            continue
        journal = entry / _JOURNAL
        if journal.is_file():
            j = json.loads(journal.read_text())
            _complete(entry, Path(j["target"]), list(j["files"]), re.compile(j["owned"]))
        shutil.rmtree(entry, ignore_errors=True)


def open_input(path: str) -> BinaryIO:
    """Open an input file for reading bytes, ``-`` meaning standard input."""
    if path == "-":
        import sys

        return sys.stdin.buffer
    return open(path, "rb")
