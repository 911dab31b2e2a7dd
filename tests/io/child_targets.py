"""A child process for tests/io/test_child.py: answers requests by their first item."""

from __future__ import annotations

import os
import time

from sitemapkit import errors
from sitemapkit.io.child import Bulk, serve


def _handle(request: object) -> object:
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
    raise AssertionError(op)


def main() -> None:
    serve(_handle)
