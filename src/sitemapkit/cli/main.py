"""cli: the command group and the one place that maps errors to exit codes.

Exit codes (``cli/status.py``): 0 success, 1 invalid input (nothing published) or
findings, 2 usage error, 3 could not read, fetch, or a limit was exceeded, 130 interrupted.
Subcommands raise; only :func:`main` and :func:`console` end the process.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import importlib
import os
import sys
import threading
from typing import Final, NoReturn

import click

from .. import __version__
from ..errors import FetchError, LimitError, ParseError, SitemapError
from .status import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE, Exit


def report_error(exc: SitemapError) -> int:
    """Print ``sitemapkit: error: <what> (at <where>)`` and a hint; return the exit code."""
    click.echo(f"sitemapkit: error: {exc}", err=True)
    if exc.hint:
        click.echo(f"sitemapkit: hint: {exc.hint}", err=True)
    if isinstance(exc, (FetchError, LimitError)) or (isinstance(exc, ParseError) and not exc.line):
        return EXIT_UNREADABLE
    return EXIT_INPUT


#: The subcommands, imported only when used (the command starts in ~0.1 s).
_COMMANDS = {
    "write": ("write", "write"),
    "crawl": ("crawl", "crawl_cmd"),
    "read": ("read", "read_cmd"),
    "validate": ("validate", "validate_cmd"),
    "report": ("report", "report_cmd"),
    "audit": ("audit", "audit_cmd"),
    "diff": ("diff", "diff_cmd"),
    "robots": ("robots", "robots_cmd"),
    "submit": ("submit", "submit"),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = _COMMANDS.get(cmd_name)
        if where is None:
            return None
        module = importlib.import_module(f".{where[0]}", __package__)
        command: click.Command = getattr(module, where[1])
        return command

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # the reader of the output went away (``| head``): done, status 0. Click
            # would turn it into status 1 itself, even outside its standalone mode.
            raise Exit(EXIT_OK) from None


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="sitemapkit")
def cli() -> None:
    """Write, read, validate and publish XML sitemaps."""


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the command and exit with its status (:class:`SystemExit`); never shows a
    traceback for bad input. The entry point for callers in a process that goes on."""
    sys.exit(run(argv))


def console() -> NoReturn:
    """The console script's and ``python -m sitemapkit``'s entry point: :func:`main`
    without the interpreter's teardown.

    Once the command is done its files are closed and published; what the teardown would
    still do is free every module's objects, 20-30 ms a run (a 200k write, medians of
    alternated runs; a reader of many sites pays it per process). The exit handlers still
    run (``weakref.finalize`` and ``atexit`` ones: temporary folders), the standard streams
    are flushed, and a process with another thread still running exits the normal way,
    which waits for it.
    """
    # httpx imports its own command-line client whenever click and rich are installed (as
    # they are for ours): 30-40 ms of a run that fetches, for a function this process never
    # calls. A None in sys.modules makes that import fail, which httpx expects.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    code = run()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: as run() treats it
        pass
    except OSError as exc:  # a full disk under a redirect: said, and not status 0
        with contextlib.suppress(OSError):
            failed = report_error(_output_error(exc))
            code = code or failed  # a command's own failure status stays
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)


#: What a write to standard output fails with when it goes to a full or broken device (a
#: command's own files report their errors themselves, with their names).
_OUTPUT_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _output_error(exc: OSError) -> SitemapError:
    return SitemapError(
        f"could not write standard output: {exc.strerror or exc}",
        hint="free space where the output goes, or send it elsewhere (what it printed "
        "before the error did arrive)",
    )


def run(argv: list[str] | None = None) -> int:
    """Run the command; return its exit status, every error reported on stderr."""
    try:
        cli.main(args=argv, prog_name="sitemapkit", standalone_mode=False)
    except Exit as exc:
        if exc.error is not None:
            report_error(exc.error)
        return exc.code
    except click.exceptions.Abort:
        click.echo("sitemapkit: aborted", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code
    except SitemapError as exc:
        return report_error(exc)
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        if exc.filename is not None or exc.errno not in _OUTPUT_ERRNOS:
            raise
        return report_error(_output_error(exc))
    except KeyboardInterrupt:
        click.echo("sitemapkit: interrupted", err=True)
        return EXIT_INTERRUPTED
    return EXIT_OK


__all__ = ["cli", "console", "main", "report_error", "run"]
