"""cli: the shapes of option that several subcommands declare, written once.

Each returns a ``click.option`` decorator; the help text, defaults and ranges are the
caller's, so ``--help`` reads as if the option were spelled out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def count(
    *names: str,
    default: int,
    help: str | None = None,
    low: int = 0,
    high: int | None = None,
    metavar: str | None = None,
) -> Callable[[F], F]:
    """A whole number in ``low..high`` with a default that ``--help`` shows."""
    return click.option(
        *names,
        type=click.IntRange(low, high),
        default=default,
        show_default=True,
        metavar=metavar,
        help=help,
    )


def seconds(
    *names: str,
    default: float,
    help: str | None = None,
    low: float = 0,
    above: bool = False,
    metavar: str | None = None,
) -> Callable[[F], F]:
    """A number of seconds, at least ``low`` (more than it with ``above``), with a default
    that ``--help`` shows."""
    return click.option(
        *names,
        type=click.FloatRange(min=low, min_open=above),
        default=default,
        show_default=True,
        metavar=metavar,
        help=help,
    )


def choice(*names: str, choices: Sequence[str], default: str, help: str) -> Callable[[F], F]:
    """One of ``choices``, with a default that ``--help`` shows."""
    return click.option(
        *names, type=click.Choice(list(choices)), default=default, show_default=True, help=help
    )


def folder(
    *names: str, help: str, exists: bool = False, writable: bool = False, required: bool = False
) -> Callable[[F], F]:
    """A folder (not a file)."""
    kind = click.Path(file_okay=False, exists=exists, writable=writable)
    return click.option(*names, type=kind, required=required, help=help)


def file(
    *names: str, help: str, writable: bool = False, metavar: str | None = None
) -> Callable[[F], F]:
    """A file (not a folder)."""
    kind = click.Path(dir_okay=False, writable=writable)
    return click.option(*names, type=kind, metavar=metavar, help=help)


def publishing(f: F) -> F:
    """The options of how sitemaps are written and published that ``write`` and ``crawl``
    share (the writer's settings; the inputs' own options are each command's)."""
    from ..core.limits import MAX_BYTES, MAX_URLS

    decorators = (
        click.option(
            "--gzip/--no-gzip", default=False, help="Write .xml.gz shards (reproducible)."
        ),
        count("--max-urls", low=1, high=MAX_URLS, default=MAX_URLS, help="URLs per sitemap file."),
        count(
            "--max-bytes",
            low=1,
            high=MAX_BYTES,
            default=MAX_BYTES,
            help="Uncompressed bytes per sitemap file.",
        ),
        choice(
            "--index",
            choices=["auto", "always", "never"],
            default="auto",
            help="auto: an index only when there is more than one file.",
        ),
        click.option("--stylesheet", metavar="URL", help="Add an <?xml-stylesheet?> for browsers."),
        click.option("--name", default="sitemap", show_default=True, help="File name prefix."),
        file(
            "--state",
            "state",
            help="SQLite state file for incremental runs: true lastmod, stable shards.",
        ),
        click.option(
            "--no-location-check",
            is_flag=True,
            help="Allow URLs outside --base-url (cross-submission via robots.txt).",
        ),
        click.option(
            "--validate",
            "validate_output",
            is_flag=True,
            help="Validate the written files (every offline rule, the XSD) before publishing; "
            "publish nothing if they have errors.",
        ),
    )
    for decorate in reversed(decorators):
        f = decorate(f)
    return f


__all__ = ["choice", "count", "file", "folder", "publishing", "seconds"]
