"""A child process for tests/io/test_child.py: answers requests by their first item.

:func:`main` serves it in a fresh interpreter; ``Child.fork(handle)`` forks it.
"""

from __future__ import annotations

import os
import time

from sitemapkit import errors
from sitemapkit.io.child import Bulk, cancelled, serve


def handle(request: object) -> object:
    if isinstance(request, Bulk):
        return (request.request, len(request.data), request.data[-3:])
    assert isinstance(request, tuple)
    op, *args = request
    if op == "echo":
        return args[0]
    if op == "print":
        print("a stray line on stdout")  # must not corrupt the channel
        return args[0]
    if op == "raise":
        name, message, fields = args
        raise getattr(errors, name)(message, **fields)
    if op == "crash":
        raise ValueError("not a SitemapError")
    if op == "die":
        os._exit(args[0])
    if op == "hang":
        time.sleep(600)
    if op == "big":
        return bytes(args[0])
    if op == "until_cancelled":  # a long job that stops when the parent ends the child
        deadline = time.monotonic() + 60
        while not cancelled() and time.monotonic() < deadline:
            time.sleep(0.01)
        return "cancelled" if cancelled() else "not cancelled"
    raise AssertionError(op)


def main() -> None:
    serve(handle)
