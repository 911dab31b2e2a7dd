"""io: files. Staged, atomic publishing and compressed sinks fed from a worker thread.

Output is written into a staging folder beside the target folder, then moved in with
``os.replace`` (same file system, so each move is atomic). The index is the one commit
point: a shard that changed is moved in under a name the live index does not use
(:meth:`Publisher.place`), so until the index is renamed over the old one a reader sees
the old set whole, and from then on the new one; the old set's files that the new one
lacks are removed after it. Unchanged files are left alone (name, bytes, mtime). A single
sitemap without an index is replaced by one rename, atomic already.

Which files are ours is kept in a manifest beside the folder (:func:`manifest_path`): only
files a run of ours published are ever removed, and the manifest, written before the first
move with the publish under way, lets the next run of any kind (:func:`sweep`) settle a
publish that a killed process left and remove dead staging folders.

Compression and file writes run on one background thread so that formatting
(the caller's thread) and deflate overlap on two cores; deflate and ``write``
release the GIL.
"""

from __future__ import annotations

import contextlib
import errno
import filecmp
import hashlib
import itertools
import json
import os
import queue
import re
import shutil
import signal
import sys
import threading
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO, Final, TextIO

from ..errors import SitemapError

fcntl: ModuleType | None
try:  # POSIX: locks that end with the process that holds them
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks, the pid in the name decides
    fcntl = None

_fast_zlib: Any
try:  # optional extra "fast": zlib-ng deflates several times faster than zlib, any level
    from zlib_ng import zlib_ng as _fast_zlib
except ImportError:  # pragma: no cover - depends on the environment
    _fast_zlib = None

__all__ = [
    "DRILL_ENV",
    "GZIP_BACKEND",
    "Publisher",
    "ShardFile",
    "Worker",
    "file_digest",
    "gzip_compressobj",
    "manifest_path",
    "open_input",
    "sweep",
    "write_error",
]

#: The default deflate: zlib-ng level 4 (~45 ms a 50k-URL shard of 10.5 MB, files ~4 %
#: larger than zlib level 6 makes, ~140 ms), else zlib level 6. ISA-L level 2 deflates in
#: ~11 ms but writes files ~17 % larger: not the default (bench/README.md, issue #15).
#: A level given (``gzip_level``) is zlib's scale, 0-9.
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
        try:
            self._fh = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            self._owner = None
            raise write_error(exc, self.path) from exc
        self._z = gzip_compressobj(self.level) if self.gzip else None
        self.raw_bytes = 0

    def write(self, data: bytes) -> None:
        self._own()
        assert self._fh is not None
        self.raw_bytes += len(data)
        try:
            self._fh.write(self._z.compress(data) if self._z is not None else data)
        except OSError as exc:
            raise write_error(exc, self.path) from exc

    def close(self, *, sync: bool = False) -> None:
        """Finish the file; ``sync``: flush it to the disk too (the publish's fsync is then
        quick, which a forked shard writer uses to take that wait off the main process)."""
        self._own()
        assert self._fh is not None
        try:
            if self._z is not None:
                self._fh.write(self._z.flush())
            if sync:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            self._fh.close()
        except OSError as exc:
            raise write_error(exc, self.path) from exc
        finally:
            self._fh = None
        self._owner = None
        self.stored_bytes = self.path.stat().st_size

    def read_back(self) -> bytes:
        """The uncompressed content of a closed file (for the rare rewrite paths)."""
        data = self.path.read_bytes()
        return zlib.decompress(data, 47) if self.gzip else data


def write_error(
    exc: OSError, path: Path | str | None = None, *, published: bool = False
) -> SitemapError:
    """What a failed write of the output becomes: what failed, where, and how to fix it.

    >>> err = write_error(OSError(errno.ENOSPC, "No space left on device"), "o/sitemap-3.xml")
    >>> err.message.split(";")[0], err.where
    ('could not write sitemap-3.xml: No space left on device', 'o/sitemap-3.xml')
    """
    where = str(path if path is not None else exc.filename or "") or None
    what = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = (
            "free space on that file system (the new sitemaps are staged beside the folder "
            "before they replace the old ones, so it needs room for both), then run again"
        )
    elif exc.errno == errno.EFBIG:
        hint = (
            "a file-size limit (ulimit -f) stopped the file: raise it, or write smaller "
            "files (--max-urls, --max-bytes, --gzip)"
        )
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "make the output folder and the folder it is in writable"
    else:
        hint = "check the output folder and its file system, then run again"
    state = (
        "the new sitemaps are published, but a step after that failed (the next run finishes it)"
        if published
        else "nothing was published, the earlier sitemaps are as they were"
    )
    name = Path(where).name if where else "the output"
    return SitemapError(f"could not write {name}: {what}; {state}", where=where, hint=hint)


#: Test-only drill hook: ``SITEMAPKIT_DRILL_KILL_AT=N`` makes the process kill itself with
#: SIGKILL just before the N-th publish step (counted over the process), as a power cut
#: or ``kill -9`` would stop it there; the drills in tests/ and bench/publish.py use it.
DRILL_ENV: Final = "SITEMAPKIT_DRILL_KILL_AT"
_STEPS = itertools.count(1)


def _step(what: str) -> None:
    """Mark the start of one publish step (the drill hook's one place)."""
    at = os.environ.get(DRILL_ENV)
    if not at:
        return
    n = next(_STEPS)
    if n == int(at):
        sys.stderr.write(f"sitemapkit: drill: killed before publish step {n}: {what}\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def file_digest(path: Path) -> str:
    """The hex digest of a file's bytes (what :meth:`Publisher.keep` checks)."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _same_slot(logical: str, ext: str) -> re.Pattern[str]:
    """The names shard ``logical`` may have in the live set (see :meth:`Publisher.place`)."""
    stem = logical.removesuffix(ext)
    return re.compile(re.escape(stem) + r"(?:-[0-9a-f]{10}(?:-[0-9]+)?)?" + re.escape(ext))


def _fsync(path: Path) -> None:
    """Flush a file or a folder to the disk, so that a power cut keeps what a rename shows."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(path.parent)


def _parent(target: Path) -> Path:
    return target.parent if str(target.parent) else Path(".")


def manifest_path(target: Path, name: str) -> Path:
    """Where the manifest of the files our runs published in ``target`` under ``name`` lives.

    Beside the folder, as the staging folders are, so the published folder holds only
    sitemaps (no dotfile is deployed with it, none is read as a sitemap).

    >>> manifest_path(Path("public"), "sitemap").name
    '.public.sitemapkit.sitemap.manifest.json'
    """
    return _parent(target) / f".{target.name}.sitemapkit.{name}.manifest.json"


class _Manifest:
    """The files of our live set, and the publish under way (``pending``, the journal)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.live: list[str] = []
        self.pending: dict[str, Any] | None = None
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            self.live = list(data.get("live", []))
            self.pending = data.get("pending")

    def save(self) -> None:
        _write_json(self.path, {"version": 1, "live": self.live, "pending": self.pending})


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    """Hold the output folder's lock: one publish (or settling) at a time."""
    fd = os.open(target, os.O_RDONLY)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _settle(target: Path, manifest: _Manifest) -> None:
    """Finish the record of a publish that a killed run left (under the folder's lock).

    The index is the commit point: if the live index files are the new ones, the old
    generation's files go; if not (killed before the index was renamed in), the new
    files moved in beside the old set go. Either way the folder holds one whole set.
    """
    p = manifest.pending
    if p is None:
        return
    commit: dict[str, str] = p["commit"]
    live = {n for n, d in commit.items() if (target / n).is_file() and file_digest(target / n) == d}
    if live and live != set(commit):  # several indexes, cut between them: roll forward
        for n in sorted(set(commit) - live):
            src = Path(p["staging"]) / n
            if src.is_file() and file_digest(src) == commit[n]:
                _step(f"settle: rename {n}")
                os.replace(src, target / n)
    new = list(p["files"])
    # committed: the old set's files the new one lacks; else what this publish moved in
    gone = sorted(set(manifest.live) - set(new)) if live else sorted(p["moved"])
    for n in gone:
        _step(f"settle: remove {n}")
        (target / n).unlink(missing_ok=True)
    manifest.live = new if live else manifest.live
    manifest.pending = None
    _step("settle: manifest")
    manifest.save()


def _alive(staging: Path, prefix: str) -> bool:
    """Whether the writer that owns ``staging`` still runs (it holds the lock inside)."""
    pid = staging.name[len(prefix) :].split("-", 1)[0]
    if not pid.isdigit():
        return True
    if int(pid) == os.getpid():  # a lock test here would release our own lock (POSIX locks)
        return staging in _LIVE
    lock = staging / _LOCK
    if fcntl is not None and lock.is_file():
        with open(lock, "a") as f:
            try:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            return False
    # no lock file (a folder being made, or of an older version): the pid in its name
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def sweep(target: Path, name: str) -> list[str]:
    """What every run does first: remove the staging folders of writers that were killed,
    and settle a publish one of them left (see :func:`_settle`). Returns the folders removed.
    """
    target = _resolved(target)
    parent = _parent(target)
    prefix = f".{target.name}.sitemapkit-"
    # settled first: a roll forward takes the index files from the dead run's staging
    manifest = _Manifest(manifest_path(target, name))
    if manifest.pending is not None and target.is_dir():
        with _locked(target):
            _settle(target, _Manifest(manifest.path))
    removed = []
    if parent.is_dir():
        for entry in sorted(parent.glob(prefix + "[0-9]*")):
            if entry.is_dir() and not _alive(entry, prefix):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry.name)
    return removed


def _resolved(target: Path) -> Path:
    # "." or "out/.." name no folder to stage beside: take the real path's name
    return target.resolve() if target.name in ("", ".", "..") else target


_LOCK: Final = ".lock"
#: The staging folders of this process's publishers that have not ended.
_LIVE: set[Path] = set()


class Publisher:
    """Stages files beside ``target`` and swaps them in; see the module docstring.

    ``name`` is the set's file-name prefix (its manifest is :func:`manifest_path`);
    ``owned`` matches the names of the writer's scheme: such a file that no run of ours
    published is never deleted nor overwritten, only named in :attr:`notes`.
    """

    def __init__(self, target: Path, name: str, owned: re.Pattern[str]) -> None:
        self.target = _resolved(target)
        self.name = name
        self.owned = owned
        self.notes: list[str] = []
        parent = _parent(self.target)
        parent.mkdir(parents=True, exist_ok=True)
        self.staging = (
            parent / f".{self.target.name}.sitemapkit-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        )
        self.staging.mkdir()
        _LIVE.add(self.staging)
        # held while this process lives: a later run that can take it knows we are gone
        self._lock: TextIO | None = open(self.staging / _LOCK, "w")  # noqa: SIM115
        if fcntl is not None:
            fcntl.lockf(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._manifest = _Manifest(manifest_path(self.target, name))
        self._kept: set[str] = set()
        self._keep: dict[str, str] = {}  # logical name -> live file, not staged (keep())
        #: The files :meth:`publish` moved into place (new or with other bytes than the
        #: live file of that name); a file kept as it was is not among them.
        self.replaced: set[str] = set()
        self._held: contextlib.ExitStack | None = None

    def stage(self, name: str) -> Path:
        return self.staging / name

    def keep(self, logical: str, live: str, ext: str, digest: str) -> bool:
        """Publish the live file ``live`` as shard ``logical`` as it is, nothing staged.

        For a shard the caller knows is unchanged: ``live`` must be a file of our live set
        in the slot of ``logical`` (``NAME-N.ext`` or ``NAME-N-HASH.ext``) whose bytes'
        :func:`file_digest` is ``digest``; then :meth:`place` names ``logical`` so and the
        publish leaves the file alone (name, bytes, mtime), and ``True``. ``False`` (the
        caller stages the shard) when it is not so.
        """
        if not _same_slot(logical, ext).fullmatch(live) or live not in self._manifest.live:
            return False
        path = self.target / live
        if not path.is_file() or file_digest(path) != digest:
            return False
        self._keep[logical] = live
        return True

    def abort(self) -> None:
        self._release()
        shutil.rmtree(self.staging, ignore_errors=True)
        _LIVE.discard(self.staging)
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _release(self) -> None:
        if self._held is not None:
            self._held.close()
            self._held = None

    def begin(self) -> None:
        """Take the folder's lock for the publish (released by :meth:`publish` or :meth:`abort`)
        and settle what a killed run left."""
        self.target.mkdir(parents=True, exist_ok=True)
        self._held = contextlib.ExitStack()
        self._held.enter_context(_locked(self.target))
        self._manifest = _Manifest(self._manifest.path)
        _settle(self.target, self._manifest)

    def place(self, shards: list[str], ext: str) -> dict[str, str]:
        """Name the staged ``shards`` for the live folder (after :meth:`begin`); returns
        each one's final name (renamed so in staging).

        A shard whose bytes equal the live file of its number keeps that file (its name,
        bytes and mtime). A changed one takes a name the live set does not use: the plain
        ``NAME-N.ext`` if that is free, else ``NAME-N-HASH.ext`` (the first hex digits of its
        bytes' hash), so that the live index never names a file about to change. Names stay
        deterministic: the same input over the same folder gives the same names.
        """
        live = set(self._manifest.live)
        names: dict[str, str] = {}
        taken: set[str] = set()
        for logical in shards:
            kept = self._keep.get(logical)
            if kept is not None:  # keep(): checked again under the lock, the file as it is
                if kept not in live or not (self.target / kept).is_file():
                    raise SitemapError(
                        f"{kept} changed while this run wrote the sitemaps; nothing was "
                        "published, the earlier sitemaps are as they were",
                        hint="run again",
                    )
                self._kept.add(kept)
                taken.add(kept)
                names[logical] = kept
                continue
            staged = self.staging / logical
            final = self._unchanged(logical, ext, live, staged)
            if final is not None:
                self._kept.add(final)
            else:
                final = logical
                if not self._free(final, live, taken):
                    stem, tag = logical.removesuffix(ext), file_digest(staged)[:10]
                    k = 1
                    final = f"{stem}-{tag}{ext}"
                    while not self._free(final, live, taken):
                        k += 1
                        final = f"{stem}-{tag}-{k}{ext}"
            if final != logical:
                staged.rename(self.staging / final)
            taken.add(final)
            names[logical] = final
        return names

    def _free(self, name: str, live: set[str], taken: set[str]) -> bool:
        return name not in live and name not in taken and not os.path.lexists(self.target / name)

    def _unchanged(self, logical: str, ext: str, live: set[str], staged: Path) -> str | None:
        """The live file of the same number with the same bytes as ``staged``, if any."""
        same_slot = _same_slot(logical, ext)
        # a file of ours named as the shard, or (no manifest yet: a folder of an earlier
        # version) the same name holding exactly these bytes
        candidates = sorted(n for n in live if same_slot.fullmatch(n))
        if logical not in live and (self.target / logical).is_file():
            candidates.append(logical)
        for name in candidates:
            path = self.target / name
            if path.is_file() and filecmp.cmp(staged, path, shallow=False):
                return name
        return None

    def publish(
        self,
        files: Iterable[str],
        last: Iterable[str],
        committed: Callable[[], None] | None = None,
    ) -> list[str]:
        """Move ``files`` then ``last`` (the index: the commit point) into place; run
        ``committed``; remove the files of the old set that the new one lacks; return them.

        Each step is one rename or one removal, and the manifest, written first with the
        publish under way, lets the next run settle one that a killed process left
        (:func:`sweep`). Call :meth:`begin` and :meth:`place` first.
        """
        if self._held is None:
            self.begin()
        files, last = list(files), list(last)
        new = [*files, *last]
        m = self._manifest
        old = list(m.live)
        commit = {n: file_digest(self.staging / n) for n in last}
        moved = [n for n in files if n not in self._kept]
        m.pending = {"files": new, "moved": moved, "commit": commit, "staging": str(self.staging)}
        try:
            _step("journal")
            m.save()
            self._move_in(files, last)
        except OSError as exc:
            with contextlib.suppress(OSError):  # back to the old set now, not next run
                _settle(self.target, m)
            raise write_error(exc, getattr(exc, "filename", None)) from exc
        try:
            if committed is not None:
                _step("commit the state")
                try:
                    committed()
                except Exception as exc:
                    raise SitemapError(
                        f"the new sitemaps are published, but recording the run failed: {exc}",
                        hint="the next run records it (and counts its changes again)",
                    ) from exc
            removed = []
            for n in sorted(set(old) - set(new)):
                if (self.target / n).is_file():
                    _step(f"remove {n}")
                    (self.target / n).unlink()
                    removed.append(n)
            m.live, m.pending = new, None
            _step("manifest")
            m.save()
        except OSError as exc:
            raise write_error(exc, getattr(exc, "filename", None), published=True) from exc
        self._note_foreign(new)
        self._release()
        _step("remove the staging folder")
        self.abort()
        return removed

    def _move_in(self, files: list[str], last: list[str]) -> None:
        """The shards (under names the live index does not use), then the index files."""
        for n in files:
            if n not in self._kept:
                _fsync(self.staging / n)
        for n in files:
            if n in self._kept:
                (self.staging / n).unlink(missing_ok=True)  # none for a keep()
            else:
                _step(f"rename {n}")
                os.replace(self.staging / n, self.target / n)
                self.replaced.add(n)
        _fsync(self.target)
        for n in last:
            src, dst = self.staging / n, self.target / n
            if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
                src.unlink()  # unchanged: keep the published bytes and mtime
                continue
            _fsync(src)
            _step(f"rename {n}")
            os.replace(src, dst)
            self.replaced.add(n)
        _fsync(self.target)

    def _note_foreign(self, new: list[str]) -> None:
        keep = set(new)
        foreign = sorted(
            n
            for n in os.listdir(self.target)
            if n not in keep and self.owned.fullmatch(n) and (self.target / n).is_file()
        )
        if foreign:
            self.notes.append(
                f"left {len(foreign)} file{'s' if len(foreign) > 1 else ''} that no run of "
                f"ours published (not in {self._manifest.path.name}): {', '.join(foreign)}; "
                "delete them if they are stale"
            )


def open_input(path: str) -> BinaryIO:
    """Open an input file for reading bytes, ``-`` meaning standard input."""
    if path == "-":
        import sys

        return sys.stdin.buffer
    return open(path, "rb")
