"""validation: the tree pass of large documents in a child process, beside the reader.

An edge (it starts a process). libxml2 holds the GIL for much of its work, so the tree
pass of a large document runs on a second core while the reader reads it here. The
interface is small on purpose: :class:`TreeProcess` ``run(plain, where, ctx)`` and
``close()``, and the caller falls back to the pass in its own process on any
:data:`FAILURES`. (The mechanism is to be replaced by the shared child-process helper of
``io``; nothing else depends on it.)

Started as ``python -c`` (no fork of a process that may run threads, no re-import of the
caller's ``__main__``). One document at a time: its uncompressed bytes go in raw after a
length-prefixed pickle of ``(size, where, ctx, limits)``; its findings and entry anchors
(never a tree) come back as a length-prefixed pickle.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import IO, Final, cast

from ..lint.checks import Context, entry_anchors
from ..lint.tree import DEFAULTS, Scan, TreeLimits, tree_pass

__all__ = ["FAILURES", "TreeProcess", "two_cores"]

#: What a tree process that could not start, or died, raises: the caller goes on without it.
FAILURES: Final = (OSError, EOFError, pickle.PickleError, struct.error)


def two_cores() -> bool:
    """Whether a tree process can help: a second core and a Python to start."""
    return (os.cpu_count() or 1) >= 2 and bool(sys.executable)


class TreeProcess:
    """The tree pass in a child process (see the module's docstring)."""

    def __init__(self, limits: TreeLimits = DEFAULTS) -> None:
        self.limits = limits
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the folder holding sitemapkit/
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from sitemapkit.validation.process import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def run(self, plain: bytes, where: str, ctx: Context) -> Scan:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        _send(stdin, (len(plain), where, ctx, self.limits))
        stdin.write(plain)  # as it is: no pickled copy of a large document
        stdin.flush()
        reply = _receive(stdout)
        if not isinstance(reply, Scan):
            raise EOFError(f"the tree process failed: {reply!r}")
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self.proc.kill()  # idle between documents: nothing to lose, no polling wait
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _send(out: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    out.write(struct.pack("!Q", len(data)))
    out.write(data)
    out.flush()


def _receive(inp: IO[bytes]) -> object:
    head = inp.read(8)
    if len(head) < 8:
        raise EOFError("the tree process ended")
    (size,) = struct.unpack("!Q", head)
    data = inp.read(size)
    if len(data) < size:
        raise EOFError("the tree process ended")
    return pickle.loads(data)


def main() -> None:  # pragma: no cover - runs in the tree process
    """The tree process: documents in on stdin, their tree pass out on stdout."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # nothing printed by accident can corrupt the channel
    inp = sys.stdin.buffer
    while True:
        try:
            request = _receive(inp)
        except EOFError:
            return
        size, where, ctx, limits = cast(tuple[int, str, Context, TreeLimits], request)
        plain = inp.read(size)
        if len(plain) < size:
            return
        try:
            scan = tree_pass(plain, where, ctx, limits)
            if scan.root is not None:
                scan.anchors = list(entry_anchors(scan.root, scan.kind))
                scan.root = None
            reply: object = scan
        except Exception as exc:  # a bug: the parent goes on without this process
            reply = f"{type(exc).__name__}: {exc}"
        _send(out, reply)
