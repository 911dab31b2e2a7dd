"""io: the one child-process helper: launch, framing, error round trip, cancellation.

**Launch.** ``Child(target)`` starts a fresh interpreter,
``sys.executable -c "from M import F; F()"``, with the folder holding ``sitemapkit`` put
first on ``PYTHONPATH``; the function calls :func:`serve`. That is the default, because:

* *fork* copies only the calling thread. Most processes that start children run threads
  (asyncio's resolver executor, the writer's background thread in ``io/files``, the
  validator's ``ThreadPoolExecutor``), so a lock another thread held at the fork stays
  locked for ever in the child.
* *multiprocessing "spawn"* also starts a fresh interpreter, but it imports the caller's
  ``__main__`` again: a script without an ``if __name__ == "__main__":`` guard starts itself
  once more in every child. A library must not ask its callers for that.

``Child.fork(handle)`` forks instead, for a caller that needs the speed (a fresh interpreter
costs 0.1–0.15 s of imports) or wants the child to inherit what it holds (the writer's
shard processes inherit the settings, the input's formatter and row function). Fork is
allowed only while the process runs exactly one thread (``threading.active_count() == 1``,
checked at the fork): then no other thread can hold a lock the child inherits. Otherwise
it raises :class:`ForkUnsafe`, and the caller takes its other path. A forked child ignores
SIGINT (Ctrl-C reaches the whole process group; the parent alone handles it and ends its
children), closes the parent's ends of the other children's pipes (so that closing a pipe
is seen as its end), and leaves with ``os._exit`` (never running the parent's code again).

**Framing.** Both pipes carry frames: an 8-byte big-endian length (a document may pass
4 GiB), then a pickle, or raw bytes for the ``data`` of a :class:`Bulk` request. Pickle is
safe because both ends are this package, started by this process. A fresh child's
``stdout`` is the channel; its file descriptor 1 is pointed at ``stderr``, so that a stray
``print`` cannot corrupt a frame (a forked child's channel is a pipe of its own). The
parent reads replies unbuffered, so :func:`ready` (``select``) tells exactly which child
has something to read.

**Errors.** The serve loop answers every request; a :class:`~sitemapkit.errors.SitemapError`
raised by the handler comes back as an :class:`ErrorRecord` and is raised again in the parent
with its class, message, where, line, column, field and hint. Any other exception comes back
as a :class:`Crash` and is raised as :class:`ChildError`. A child that dies raises
:class:`ChildGone` (or the error a caller chose) for every reply it owed.

**Shutdown and cancellation.** Closing the request pipe ends the child's loop (it sees end
of file), and a handler that polls :func:`cancelled` sees it while it works, so it can stop
at once. :func:`close_all` closes every child's input first, then reads and drops what each
still sends (a reply larger than a pipe holds would block it) until it exits; one that
outlasts ``grace`` seconds is killed. Cancelling a coroutine that waits for a reply leaves
the child running for the other requests; :meth:`AsyncChild.close` stops it.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, NoReturn, Protocol, Self, TypeVar

if TYPE_CHECKING:
    # only AsyncChild needs asyncio, and only under a running loop: the writer's forked
    # children and the tree process start without it (40 ms of imports)
    import asyncio

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
    "ForkUnsafe",
    "cancelled",
    "close_all",
    "ready",
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
    """A :class:`~sitemapkit.errors.SitemapError` the handler raised, as it crosses the
    process boundary (the error pickles whole: its class and every field)."""

    error: SitemapError

    @classmethod
    def of(cls, exc: SitemapError) -> ErrorRecord:
        return cls(exc)

    def exception(self) -> SitemapError:
        """The error again, of its own class, with its message and every field."""
        return self.error


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
    """Frames over a pair of binary pipes (blocking); ``inp`` may be unbuffered."""

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
        (size,) = _HEAD.unpack(self._read(_HEAD.size, "the channel was closed"))
        return self._read(size, "the channel was closed within a frame")

    def _read(self, size: int, closed: str) -> bytes:
        # an unbuffered pipe gives what it holds (64 KiB), a buffered one all at once
        data = self._inp.read(size)
        got = len(data)
        if got < size:
            parts = [data]
            while got < size and (more := self._inp.read(size - got)):
                parts.append(more)
                got += len(more)
            if got < size:
                raise EOFError(closed)
            data = b"".join(parts)
        return data


#: In a child: the file descriptor its requests come in by (see :func:`cancelled`).
_serving: list[int] = []
#: In the parent: every child not closed yet; a forked child closes their pipes. Weak,
#: so that a child dropped without ``close()`` (its files closed by the collector) leaves.
_live: weakref.WeakSet[Child] = weakref.WeakSet()


def cancelled() -> bool:
    """In a child, during a request: whether the parent has closed the request pipe.

    A handler polls it to stop a long request at once when the parent ends the child
    (it then answers whatever it likes; the parent drops it). For a :class:`Child`, which
    sends the next request only after the reply, nothing else can be waiting there.
    """
    return bool(_serving) and bool(select.select(_serving, [], [], 0)[0])


def _answer(channel: Channel, handle: Callable[[Any], object], requests: int) -> None:
    """Answer each request frame with ``handle(request)``, until end of file."""
    _serving[:] = [requests]
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
        try:
            channel.send(reply)
        except BrokenPipeError:
            return  # the parent no longer reads


def serve(handle: Callable[[Any], object]) -> None:  # pragma: no cover - in the child
    """A fresh child's loop: answer each request frame with ``handle(request)``, until EOF."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # nothing printed by accident can corrupt the channel
    _answer(Channel(sys.stdin.buffer, out), handle, sys.stdin.fileno())


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


class ForkUnsafe(ChildError):
    """:meth:`Child.fork` was refused: another thread runs in this process."""


class _Process(Protocol):
    """What :class:`Child` needs of its process: :class:`subprocess.Popen` or a fork."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...


class _Fork:
    """A forked process by its pid: ``poll``/``wait``/``kill`` as :class:`subprocess.Popen`."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                pid, status = self.pid, 255 << 8
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005  # as Popen.wait: a child that is exiting is seen at once
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"fork {self.pid}", timeout or 0.0)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return code

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def _fork(handle: Callable[[Any], object]) -> tuple[_Fork, IO[bytes], IO[bytes]]:
    """Fork a child that serves ``handle``: its process, the reply and request pipes."""
    if threading.active_count() != 1:
        raise ForkUnsafe(
            f"cannot fork: {threading.active_count()} threads run in this process"
            " (a lock another thread holds would stay locked in the child)"
        )
    req_in, req_out = os.pipe()
    rep_in, rep_out = os.pipe()
    # Ctrl-C waits until the child ignores it and the parent holds the child's pipes
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
    except BaseException:  # no child (out of processes): no pipe left open
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for fd in (req_in, req_out, rep_in, rep_out):
            os.close(fd)
        raise
    if pid == 0:  # pragma: no cover - in the child
        _forked_main(handle, req_in, rep_out, (req_out, rep_in), mask)
    try:
        os.close(req_in)
        os.close(rep_out)
        return _Fork(pid), os.fdopen(rep_in, "rb", buffering=0), os.fdopen(req_out, "wb")
    finally:  # a Ctrl-C now drops the pipes: the child sees their end and exits
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _forked_main(
    handle: Callable[[Any], object],
    requests: int,
    replies: int,
    parents: tuple[int, int],
    mask: set[int | signal.Signals],
) -> NoReturn:  # pragma: no cover - in the child
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for fd in parents:
            os.close(fd)
        for other in list(_live):  # else their ends would stay open while it runs
            other._close_pipes()
        _answer(Channel(os.fdopen(requests, "rb"), os.fdopen(replies, "wb")), handle, requests)
        code = 0
    finally:
        os._exit(code)  # never back into the parent's code


class Child(Closeable):
    """A child process answering requests one at a time (blocking), for synchronous code.

    ``target`` is ``"package.module:function"``; the function calls :func:`serve`
    (:meth:`fork` forks one instead). :meth:`request` sends a value and returns the reply
    (raising what the child raised). Leaving a ``with`` block closes it (kills it when the
    block raised).
    """

    proc: _Process

    def __init__(self, target: str, *, name: str = "the child process") -> None:
        argv, env = _command(target)
        # unbuffered, so that select() sees every reply byte not read yet
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0
        )
        assert proc.stdin is not None and proc.stdout is not None
        self._attach(name, proc, proc.stdout, io.BufferedWriter(proc.stdin))

    @classmethod
    def fork(cls, handle: Callable[[Any], object], *, name: str = "the child process") -> Self:
        """A forked child answering each request with ``handle(request)``.

        Raises :class:`ForkUnsafe` while another thread runs (see the module's docstring).
        """
        self = cls.__new__(cls)
        self._attach(name, *_fork(handle))
        return self

    def _attach(self, name: str, proc: _Process, replies: IO[bytes], requests: IO[bytes]) -> None:
        self.name = name
        self.proc = proc
        self._replies = replies
        self._requests = requests
        _live.add(self)
        self._channel = Channel(replies, requests)

    def fileno(self) -> int:
        """The reply pipe (for :func:`ready`)."""
        return self._replies.fileno()

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
        close_all([self], grace)

    def kill(self) -> None:
        """Stop the child now (it may be in the middle of a request)."""
        self.proc.kill()
        self.close(0)

    def _close_after_error(self) -> None:
        self.kill()  # the with block failed: the child's work is not wanted

    def _close_pipes(self) -> None:
        self._end_requests()
        self._replies.close()
        _live.discard(self)

    def _end_requests(self) -> None:
        with contextlib.suppress(OSError):  # flushing (nothing: each frame is) to a dead child
            self._requests.close()

    def _finish(self, deadline: float) -> None:
        """Drop what the child still sends until it exits; kill it at ``deadline``."""
        talking = not self._replies.closed
        while talking and self.proc.poll() is None:
            left = max(0.0, deadline - time.monotonic())
            if select.select([self._replies], [], [], left)[0]:
                talking = bool(self._replies.read(1 << 16))
            else:
                break
        try:  # it closed the pipe: it is exiting
            self.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._close_pipes()


_C = TypeVar("_C", bound=Child)


def ready(children: Iterable[_C], timeout: float | None = None) -> list[_C]:
    """Those of ``children`` with a reply (or their end) to read, waiting up to ``timeout``."""
    found, _, _ = select.select(list(children), [], [], timeout)
    return found


def close_all(children: Iterable[Child], grace: float = 2.0) -> None:
    """End children together; one still running after ``grace`` seconds is killed.

    Every input is closed first (an idle child exits at once, a busy one sees
    :func:`cancelled`), then what each still sends is read and dropped until it exits.
    """
    children = list(children)
    deadline = time.monotonic() + grace
    try:
        for child in children:
            child._end_requests()
        for child in children:
            child._finish(deadline)
    except BaseException:  # interrupted (a second Ctrl-C): leave no process behind
        for child in children:
            child.proc.kill()
            child._finish(0)
        raise


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
        import asyncio

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
        import asyncio

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
        import asyncio

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
        import asyncio

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
