"""cli: the exit statuses, and how a subcommand ends with one.

A subcommand never calls ``sys.exit``: it returns (status 0) or raises :class:`Exit`, and
``cli/main.py`` alone turns that, and every error, into the status of the process:
0 success, 1 invalid input (nothing published) or findings, 2 usage error, 3 could not
read, fetch, or a limit was exceeded, 130 interrupted.
"""

from __future__ import annotations

from ..errors import SitemapError

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 3
EXIT_INTERRUPTED = 130


class Exit(Exception):
    """End the command with status ``code``, reporting ``error`` first when there is one
    (as an error no subcommand catches is reported)."""

    def __init__(self, code: int, error: SitemapError | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.error = error


__all__ = ["EXIT_INPUT", "EXIT_OK", "EXIT_UNREADABLE", "EXIT_USAGE", "Exit"]
