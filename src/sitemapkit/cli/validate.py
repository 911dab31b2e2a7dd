"""cli: ``sitemapkit validate``: check sitemaps, build folders and URLs against every rule."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import click

from .. import __version__
from ..lint.report import RENDERERS
from ..validation import validate


@click.command("validate")
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@click.option(
    "--published-at",
    "published_at",
    multiple=True,
    metavar="URL",
    help="The URL a local file is published at (enables the location rules and finds an "
    "index's children beside it). Once for the first file, or once per file.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(RENDERERS)),
    default="text",
    show_default=True,
    help="text (grouped by file), json, junit (JUnit XML), sarif (SARIF 2.1.0) or github "
    "(workflow annotations).",
)
@click.option(
    "--select",
    multiple=True,
    metavar="IDS",
    help="Only these rules (ids or prefixes, comma separated: SM2,HRE905).",
)
@click.option("--ignore", multiple=True, metavar="IDS", help="Skip these rules.")
@click.option("--strict", is_flag=True, help="Promote the rules marked strict→error.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default="error",
    show_default=True,
    help="Exit 1 when a finding is at least this severe.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST",
    help="Accept URLs of this host (or https://host:port) in the sitemap: cross-submission "
    "proven by that host's robots.txt (SM214).",
)
@click.option("--no-follow", is_flag=True, help="Do not validate the children of indexes.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the report to this file instead of standard output.",
)
def validate_cmd(
    targets: tuple[str, ...],
    published_at: tuple[str, ...],
    fmt: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    strict: bool,
    fail_on: str,
    allow_hosts: tuple[str, ...],
    no_follow: bool,
    output: str | None,
) -> None:
    """Validate sitemap files, URLs, or a whole set (an index and its children).

    \b
    Examples:
      sitemapkit validate sitemap.xml
      sitemapkit validate public/sitemap.xml --published-at https://example.com/sitemap.xml
      sitemapkit validate https://example.com/sitemap.xml --format sarif -o sitemap.sarif
      sitemapkit validate a.xml b.xml.gz --ignore SM3 --fail-on warning --format github

    A local index validated with --published-at reads each child whose URL lies under
    the index's directory URL from the matching path beside it, so a build folder is
    checked before it is deployed; a child that is not there is noted, not an error.

    Exit codes: 0 no finding at or above --fail-on; 1 findings at or above it;
    2 usage error; 3 a target could not be read.
    """
    from .main import EXIT_INPUT, EXIT_UNREADABLE  # here: main imports this module

    selected = list(select) if select else None
    try:
        report = validate(
            list(targets),
            published_at=list(published_at),
            allow_hosts=allow_hosts,
            strict=strict,
            select=selected,
            ignore=ignore,
            now=dt.datetime.now(dt.UTC),
            follow=not no_follow,
            excerpts=fmt == "text",
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    tty = output is None and sys.stdout.isatty()
    text = RENDERERS[fmt](
        report,
        style=click.style if tty else None,
        fail_on=fail_on,
        tool_version=__version__,
    )
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text, encoding="utf-8")
    if report.unreadable:
        sys.exit(EXIT_UNREADABLE)
    if report.failed(fail_on):  # type: ignore[arg-type]
        sys.exit(EXIT_INPUT)


__all__ = ["validate_cmd"]
