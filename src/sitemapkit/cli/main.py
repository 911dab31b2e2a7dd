"""cli: the command group and the one place that maps errors to exit codes.

Exit codes: 0 success, 1 invalid input (nothing published) or findings,
2 usage error, 3 could not read, fetch, or a limit was exceeded.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import __version__
from ..errors import FetchError, LimitError, ParseError, SitemapError

EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 3


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
    "read": ("read", "read_cmd"),
    "validate": ("validate", "validate_cmd"),
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


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="sitemapkit")
def cli() -> None:
    """Write, read, validate and publish XML sitemaps."""


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script; never shows a traceback for bad input."""
    try:
        cli.main(args=argv, prog_name="sitemapkit", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("sitemapkit: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
    except SitemapError as exc:
        sys.exit(report_error(exc))
    except BrokenPipeError:
        sys.exit(0)
    except KeyboardInterrupt:
        click.echo("sitemapkit: interrupted", err=True)
        sys.exit(130)
    sys.exit(0)
