"""io: the one child-process helper: launch, framing, error round trip, shutdown.

**Launch.** A child is a fresh interpreter, ``sys.executable -c "from M import F; F()"``,
with the folder holding ``sitemapkit`` put first on ``PYTHONPATH``. Why not the others:

* *fork* copies only the calling thread. The processes that start children run threads
  (asyncio's resolver executor, the writer's background thread in ``io/files``, the
  validator's ``ThreadPoolExecutor``), so a lock another thread held at the fork stays
  locked for ever in the child. It is unsafe here, whatever its speed.
* *multiprocessing "spawn"* also starts a fresh interpreter, but it imports the caller's
  ``__main__`` again: a script without an ``if __name__ == "__main__":`` guard starts itself
  once more in every child. A library must not ask its callers for that.

The writer's parallel path (``io/sources``) forks on purpose, a speed choice its owner
makes: the children inherit the open input and a fresh writer instead of receiving them by
pipe. That is sound only while the forking process runs no other thread (a fresh writer
has not started its background thread yet), an invariant that path must keep on its own.
It is not built on this helper; moving onto it means sending the work by frames (a
:class:`Bulk` request carries large bytes without a pickled copy, as validation's tree
process needs: ``Child.send_bulk((where, ctx), document)`` then ``receive()``).

**Framing.** Both pipes carry frames: an 8-byte big-endian length (a document may pass
4 GiB), then a pickle, or raw bytes for the ``data`` of a :class:`Bulk` request. Pickle is
safe because both ends are this package, started by this process. The child's ``stdout``
is the channel; its file descriptor 1 is pointed at ``stderr``, so that a stray ``print``
cannot corrupt a frame.

**Errors.** :func:`serve` answers every request; a :class:`~sitemapkit.errors.SitemapError`
raised by the handler comes back as an :class:`ErrorRecord` and is raised again in the parent
with its class, message, where, line, column, field and hint. Any other exception comes back
as a :class:`Crash` and is raised as :class:`ChildError`. A child that dies raises
:class:`ChildGone` (or the error a caller chose) for every reply it owed.

**Shutdown.** Closing the request pipe ends the child's loop (it sees end of file); a child
that does not exit within ``grace`` seconds is killed. Cancelling a coroutine that waits for
a reply leaves the child running for the other requests; :meth:`AsyncChild.close` stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import struct
import subprocess
import sys
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from .. import errors
from ..errors import SitemapError
from .resource import Closeable

__all__ = [
    "AsyncChild",
    "Bulk",
    "Channel",
    "Child",
    "ChildError",
    "ChildGone",
    "Crash",
    "ErrorRecord",
    "serve",
]

_HEAD: Final = struct.Struct("!Q")
_ROOT: Final = str(Path(__file__).resolve().parents[2])  # the folder holding sitemapkit/


class ChildError(RuntimeError):
    """The child failed in a way that is not a :class:`~sitemapkit.errors.SitemapError`."""


class ChildGone(ChildError):
    """The child exited before it answered; ``returncode`` is its exit status."""

    def __init__(self, message: str, returncode: int | None) -> None:
        super().__init__(message)
        self.returncode = returncode


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """A :class:`~sitemapkit.errors.SitemapError` as it crosses the process boundary."""

    kind: str
    message: str
    where: str | None = None
    line: int | None = None
    column: int | None = None
    field: str | None = None
    hint: str | None = None

    @classmethod
    def of(cls, exc: SitemapError) -> ErrorRecord:
        return cls(
            type(exc).__name__, exc.message, exc.where, exc.line, exc.column, exc.field, exc.hint
        )

    def exception(self) -> SitemapError:
        """The error again, of its own class (the root class for a name not in errors)."""
        found = getattr(errors, self.kind, None)
        cls = found if isinstance(found, type) and issubclass(found, SitemapError) else None
        return (cls or SitemapError)(
            self.message,
            where=self.where,
            line=self.line,
            column=self.column,
            field=self.field,
            hint=self.hint,
        )


@dataclass(frozen=True, slots=True)
class Bulk:
    """A request with large bytes that travel as a raw frame after it, never pickled.

    :meth:`Child.send_bulk` sends it; :func:`serve` hands the handler a ``Bulk`` whose
    ``data`` holds those bytes.
    """

    request: object
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class Crash:
    """Any other exception of the child's handler: its ``repr`` and traceback text."""

    text: str
    trace: str = ""


class Channel:
    """Frames over a pair of binary pipes (blocking)."""

    def __init__(self, inp: IO[bytes], out: IO[bytes]) -> None:
        self._inp = inp
        self._out = out

    def send(self, obj: object) -> None:
        self.send_bytes(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))

    def send_bytes(self, data: bytes) -> None:
        self._out.write(_HEAD.pack(len(data)))
        self._out.write(data)
        self._out.flush()

    def receive(self) -> object:
        """The next value; raises EOFError when the other end closed."""
        return pickle.loads(self.receive_bytes())

    def receive_bytes(self) -> bytes:
        head = self._inp.read(_HEAD.size)
        if len(head) < _HEAD.size:
            raise EOFError("the channel was closed")
        (size,) = _HEAD.unpack(head)
        data = self._inp.read(size)
        if len(data) < size:
            raise EOFError("the channel was closed within a frame")
        return data


def serve(handle: Callable[[Any], object]) -> None:  # pragma: no cover - in the child
    """The child's loop: answer each request frame with ``handle(request)``, until EOF."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # nothing printed by accident can corrupt the channel
    channel = Channel(sys.stdin.buffer, out)
    while True:
        try:
            request = channel.receive()
            if isinstance(request, Bulk):
                request = Bulk(request.request, channel.receive_bytes())
        except EOFError:
            return
        reply: object
        try:
            reply = handle(request)
        except SitemapError as exc:
            reply = ErrorRecord.of(exc)
        except Exception as exc:
            reply = Crash(repr(exc), traceback.format_exc())
        channel.send(reply)


def _command(target: str) -> tuple[list[str], dict[str, str]]:
    module, _, func = target.partition(":")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
    return [sys.executable, "-c", f"from {module} import {func}; {func}()"], env


def _unwrap(reply: object) -> object:
    if isinstance(reply, ErrorRecord):
        raise reply.exception()
    if isinstance(reply, Crash):
        raise ChildError(f"{reply.text}\n{reply.trace}".rstrip())
    return reply


class Child(Closeable):
    """A child process answering requests one at a time (blocking), for synchronous code.

    ``target`` is ``"package.module:function"``; the function calls :func:`serve`.
    :meth:`request` sends a value and returns the reply (raising what the child raised).
    Leaving a ``with`` block closes it (kills it when the block raised).
    """

    def __init__(self, target: str, *, name: str = "the child process") -> None:
        self.name = name
        argv, env = _command(target)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._channel = Channel(self.proc.stdout, self.proc.stdin)

    def send(self, obj: object) -> None:
        try:
            self._channel.send(obj)
        except (BrokenPipeError, ConnectionError):
            raise self._gone() from None

    def send_bulk(self, request: object, data: bytes) -> None:
        """Send ``request`` with ``data`` beside it (see :class:`Bulk`)."""
        try:
            self._channel.send(Bulk(request))
            self._channel.send_bytes(data)
        except (BrokenPipeError, ConnectionError):
            raise self._gone() from None

    def receive(self) -> object:
        try:
            reply = self._channel.receive()
        except EOFError:
            raise self._gone() from None
        return _unwrap(reply)

    def request(self, obj: object) -> object:
        self.send(obj)
        return self.receive()

    def _gone(self) -> ChildGone:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(1.0)
        code = self.proc.returncode
        return ChildGone(f"{self.name} exited unexpectedly (exit code {code})", code)

    def close(self, grace: float = 2.0) -> None:
        """End the child: close its input, wait ``grace`` seconds, then kill it."""
        proc = self.proc
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def kill(self) -> None:
        """Stop the child now (it may be in the middle of a request)."""
        self.proc.kill()
        self.close(0)

    def _close_after_error(self) -> None:
        self.kill()  # the with block failed: the child's work is not wanted


Gone = Callable[[int | None], BaseException]


class AsyncChild:
    """A child process on an asyncio loop; requests are pipelined, replies come in order.

    :meth:`send` writes a request and returns the future of its reply; call :meth:`drain`
    for backpressure. When the child dies, every reply it owed fails with ``gone(code)``
    (a :class:`ChildGone` by default) and ``dead`` is true.
    """

    def __init__(
        self, target: str, *, name: str = "the child process", gone: Gone | None = None
    ) -> None:
        self.target = target
        self.name = name
        self._make_gone = gone
        self.proc: asyncio.subprocess.Process | None = None
        self.pending: deque[asyncio.Future[object]] = deque()
        self.dead = False
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the child (raises OSError when it cannot be started)."""
        argv, env = _command(self.target)
        self.proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
        )
        self._reader = asyncio.create_task(self._read())

    def gone(self) -> BaseException:
        code = self.proc.returncode if self.proc is not None else None
        if self._make_gone is not None:
            return self._make_gone(code)
        return ChildGone(f"{self.name} exited unexpectedly (exit code {code})", code)

    def send(self, obj: object) -> asyncio.Future[object]:
        fut: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        if self.dead or self.proc is None or self.proc.stdin is None:
            fut.set_exception(self.gone())
            return fut
        data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
        self.pending.append(fut)
        self.proc.stdin.write(_HEAD.pack(len(data)) + data)
        return fut

    async def request(self, obj: object) -> object:
        fut = self.send(obj)
        await self.drain()
        return await fut

    async def drain(self) -> None:
        if self.proc is not None and self.proc.stdin is not None and not self.dead:
            with contextlib.suppress(ConnectionError):
                await self.proc.stdin.drain()

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        try:
            while True:
                (size,) = _HEAD.unpack(await stdout.readexactly(_HEAD.size))
                reply = pickle.loads(await stdout.readexactly(size))
                fut = self.pending.popleft()
                if fut.done():
                    continue  # its waiter was cancelled
                try:
                    fut.set_result(_unwrap(reply))
                except (SitemapError, ChildError) as exc:
                    fut.set_exception(exc)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        self.dead = True
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 1.0)
        self._fail_pending()

    async def close(self, grace: float = 2.0) -> None:
        """End the child: close its input, wait ``grace`` seconds, then kill it."""
        proc = self.proc
        if proc is None:
            return
        self.dead = True
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._fail_pending()

    def _fail_pending(self) -> None:
        while self.pending:
            fut = self.pending.popleft()
            if not fut.done():
                fut.set_exception(self.gone())
