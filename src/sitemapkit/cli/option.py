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


__all__ = ["choice", "count", "file", "folder", "seconds"]
