"""validation: the tree pass of large documents in a child process, beside the reader.

An edge (it starts a process). libxml2 holds the GIL for much of its work, so the tree
pass of a large document runs on a second core while the reader reads it here. The child is
started, framed and stopped by :mod:`sitemapkit.io.child`, the one child-process helper (a
fresh interpreter: the validator runs a thread pool, so it never forks). One document at a
time: its uncompressed bytes travel as a raw frame beside ``(where, ctx, limits)`` (a
:class:`~sitemapkit.io.child.Bulk`, no pickled copy of a large document); its findings
and entry anchors (never a tree) come back, with the entries' byte spans, found here
while the reader reads, so that placing findings and alternates there reads only their
entries' tags (and an entry's ``<loc>``, found with its span, none). On any of
:data:`FAILURES` the caller goes on with the pass in its own process.
"""

from __future__ import annotations

import os
import pickle
import sys
from array import array
from typing import Final, cast

from ..io.child import Bulk, Child, ChildError, serve
from ..lint.checks import Context, entry_anchors
from ..lint.checks.position import entry_spans
from ..lint.tree import DEFAULTS, Scan, TreeLimits, tree_pass

__all__ = ["FAILURES", "TreeProcess", "two_cores"]

#: What a tree process that could not start, failed or died raises: the caller goes on
#: without it (a crash of the pass there is a bug, but the document is still validated).
FAILURES: Final = (OSError, ChildError, pickle.PickleError)


def two_cores() -> bool:
    """Whether a tree process can help: a second core and a Python to start."""
    return (os.cpu_count() or 1) >= 2 and bool(sys.executable)


class TreeProcess:
    """The tree pass in a child process (see the module's docstring)."""

    def __init__(self, limits: TreeLimits = DEFAULTS) -> None:
        self.limits = limits
        self._child = Child("sitemapkit.validation.process:main", name="the tree process")

    @property
    def pid(self) -> int:
        return self._child.proc.pid

    def run(self, plain: bytes, where: str, ctx: Context) -> Scan:
        self._child.send_bulk((where, ctx, self.limits), plain)
        reply = self._child.receive()
        if not isinstance(reply, Scan):
            raise ChildError(f"the tree process answered {type(reply).__name__}, not a Scan")
        return reply

    def close(self) -> None:
        self._child.kill()  # idle between documents: nothing to lose, no polling wait


def _pass(request: object) -> Scan:  # pragma: no cover - runs in the tree process
    assert isinstance(request, Bulk)
    where, ctx, limits = cast(tuple[str, Context, TreeLimits], request.request)
    scan = tree_pass(request.data, where, ctx, limits)
    if scan.root is not None:
        scan.anchors = list(entry_anchors(scan.root, scan.kind))
        scan.root = None
    if scan.kind in ("urlset", "sitemapindex") and not scan.plain:
        # the reader's process would read every tag again to place a finding or an
        # alternate (seconds for a large document); here it runs beside the reader
        scan.locs = array("q")
        scan.spans = entry_spans(request.data, scan.kind, locs=scan.locs)
    return scan


def main() -> None:  # pragma: no cover - runs in the tree process
    """The tree process: documents in, their tree pass out (:func:`~sitemapkit.io.child.serve`)."""
    serve(_pass)
