"""cli: ``sitemapkit robots``: add or check the ``Sitemap:`` lines of a robots.txt."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import click

from ..core.robotsfile import add_sitemaps, check_sitemap_url
from .status import EXIT_INPUT, EXIT_OK, EXIT_UNREADABLE, Exit

__all__ = ["robots_cmd"]


def _sitemap_urls(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    try:
        return [check_sitemap_url(v) for v in values]
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping the old file's permissions."""
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@click.command("robots")
@click.option(
    "--sitemap",
    "sitemaps",
    metavar="URL",
    multiple=True,
    required=True,
    callback=_sitemap_urls,
    help="Absolute URL of a sitemap or sitemap index (repeat for several).",
)
@click.option(
    "--robots",
    "robots",
    metavar="FILE",
    help="The robots.txt to edit in place (created if missing). Without it (or with -), "
    "robots.txt is read from stdin (empty on a terminal) and the result goes to stdout.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Change nothing; exit 1 when a URL is not listed.",
)
def robots_cmd(sitemaps: list[str], robots: str | None, check: bool) -> None:
    """Add a `Sitemap: URL` line to a robots.txt, or check that it is there.

    Only missing URLs are added, as `Sitemap: <URL>` lines at the end of the file after
    a blank line (right after existing Sitemap: lines when the file ends with them; at
    the top when the file is over 500 KiB, the most Google reads). Everything else is
    kept byte for byte: line endings, BOM, comments and order. Existing lines are found
    in any letter case, with comments and the `Site-map:` typo Google tolerates; lines
    that crawlers ignore (relative URLs) or may not read (typos) are reported on stderr
    but never rewritten. A file is replaced atomically, and only when it changes.

    \b
    Examples:
      sitemapkit robots --sitemap https://example.com/sitemap.xml --robots public/robots.txt
      sitemapkit robots --sitemap https://example.com/sitemap.xml --robots robots.txt --check
      sitemapkit robots --sitemap https://example.com/sitemap.xml < robots.txt > new.txt

    Exit codes: 0 done (or, with --check, every URL listed); 1 a URL is missing (--check);
    2 bad option (e.g. a relative URL); 3 the file could not be read or written.
    """
    path = None if robots in (None, "-") else Path(robots)
    try:
        if path is None:
            data = b"" if sys.stdin.isatty() else sys.stdin.buffer.read()
        else:
            data = path.read_bytes() if path.exists() else b""
    except OSError as exc:
        click.echo(f"sitemapkit: error: cannot read {robots!r}: {exc.strerror}", err=True)
        raise Exit(EXIT_UNREADABLE) from None
    name = "robots.txt" if path is None else str(path)
    edit = add_sitemaps(data, sitemaps)
    for note in edit.notes:
        click.echo(f"sitemapkit: warning: {name}: {note}", err=True)
    for url, line in edit.present:
        click.echo(f"sitemapkit: {name}:{line}: listed: {url}", err=True)
    if check:
        if path is not None and not data and not path.exists():
            click.echo(f"sitemapkit: {name} does not exist", err=True)
        for url in edit.added:
            click.echo(f"sitemapkit: {name}: missing: Sitemap: {url}", err=True)
        raise Exit(EXIT_INPUT if edit.added else EXIT_OK)
    for url in edit.added:
        click.echo(f"sitemapkit: {name}: added: Sitemap: {url}", err=True)
    if path is None:
        sys.stdout.buffer.write(edit.data)
        sys.stdout.buffer.flush()
        return
    if edit.changed:
        try:
            write_atomically(path, edit.data)
        except OSError as exc:
            click.echo(f"sitemapkit: error: cannot write {robots!r}: {exc.strerror}", err=True)
            raise Exit(EXIT_UNREADABLE) from None
