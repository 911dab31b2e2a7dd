"""cli: ``sitemapkit write``: inputs to published sitemaps."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

import click

from .. import Finding, InputError, SitemapWriter, WriteResult
from ..io.sources import write_inputs
from . import option

if TYPE_CHECKING:
    # the folder source (an HTML reader) and the validator are imported only when used:
    # a plain write starts without lxml, the XSDs and the HTTP stack
    from ..io.sources.folder import FolderOptions
    from .validate import StatusLine

#: ``--lastmod-from``'s default: every source of the folder reader, in its order
#: (``io.sources.folder.LASTMOD_SOURCES``; a test keeps them the same).
LASTMOD_DEFAULT: Final = "page,git,mtime"


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


def print_table(result: WriteResult, gzip: bool, elapsed: float) -> None:
    tty = sys.stdout.isatty()
    rows: list[tuple[str, ...]] = [
        (f.name, f.kind, f"{f.entries:,}", f"{f.bytes:,}", f"{f.stored_bytes:,}" if gzip else "-")
        for f in result.files
    ]
    if tty:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"wrote {result.directory}")
        for col, just in (
            ("file", "left"),
            ("kind", "left"),
            ("entries", "right"),
            ("bytes", "right"),
            ("gzip bytes", "right"),
        ):
            table.add_column(col, justify=just)  # type: ignore[arg-type]
        for r in rows:
            table.add_row(*r)
        Console().print(table)
    else:
        head: tuple[str, ...] = ("file", "kind", "entries", "bytes", "gzip bytes")
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
        for r in (head, *rows):
            click.echo(
                "  ".join(
                    str(x).ljust(w) if i < 2 else str(x).rjust(w)
                    for i, (x, w) in enumerate(zip(r, widths, strict=True))
                )
            )
    rate = result.urls / elapsed if elapsed > 0 else 0.0
    click.echo(
        f"{result.urls:,} URLs in {len(result.files)} files to {result.directory} "
        f"in {elapsed:.2f} s ({rate:,.0f} URLs/s)"
    )


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@option.folder(
    "-o",
    "--output",
    "out",
    required=True,
    help="Folder to publish into (created if missing).",
)
@click.option(
    "--base-url",
    required=True,
    help="URL at which the output folder is served, e.g. https://example.com/.",
)
@option.choice(
    "--format",
    "fmt",
    choices=["xml", "txt"],
    default="xml",
    help="XML sitemaps or text sitemaps (one URL per line).",
)
@option.publishing
@option.folder(
    "--content-from",
    exists=True,
    help="With --state: the built site; a page's file hash tells when it changed.",
)
@click.option(
    "--clean-urls",
    is_flag=True,
    help="Folder input: list about.html as …/about (for hosts that serve it there).",
)
@click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="Folder input: also list these files, e.g. '*.pdf' (repeatable).",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Folder input: leave these files or folders out, e.g. 'drafts/*' (repeatable).",
)
@click.option(
    "--lastmod-from",
    default=LASTMOD_DEFAULT,
    show_default=True,
    metavar="SOURCES",
    help="Folder input: where lastmod comes from, in order (page, git, mtime), or none.",
)
@click.option(
    "--strict-columns",
    is_flag=True,
    help="CSV input: refuse columns that are not sitemap fields (else they are ignored).",
)
def write(
    inputs: tuple[str, ...],
    out: str,
    base_url: str,
    gzip: bool,
    max_urls: int,
    max_bytes: int,
    index: str,
    fmt: str,
    stylesheet: str | None,
    name: str,
    state: str | None,
    content_from: str | None,
    no_location_check: bool,
    clean_urls: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    lastmod_from: str,
    strict_columns: bool,
    validate_output: bool,
) -> None:
    """Write sitemaps from INPUT files (.txt, .csv, .jsonl, .xml, .xml.gz; - for stdin)
    or from a built site folder.

    \b
    Examples:
      sitemapkit write urls.txt -o public/ --base-url https://example.com/
      sitemapkit write pages.csv -o public/ --base-url https://example.com/ --gzip
      sitemapkit write public/ -o public/ --base-url https://example.com/
      sitemapkit read https://example.com/ --format jsonl | \\
          sitemapkit write - -o out/ --base-url https://example.com/

    CSV columns: loc (required), lastmod, changefreq, priority, images (space
    separated URLs), alternates (hreflang=URL, space separated), news_name,
    news_language, news_publication_date, news_title, video_* (see the README).
    Columns that are not sitemap fields are ignored (--strict-columns refuses them);
    url or Address name the loc column too; the delimiter may be , ; or tab.
    Files are staged and swapped in atomically; on invalid input nothing is published.

    A folder is a built site: its .html pages at their URLs (index.html as its
    folder's URL), without noindex pages, pages whose canonical is another URL,
    error pages (404.html), what its robots.txt disallows and hidden folders;
    lastmod from the page's own date, else git, else the file's mtime.

    With --state FILE, runs are incremental: a row without lastmod gets the time its
    content last changed (a content_hash column, --content-from DIR, or else the entry
    itself), URLs keep their shard, and unchanged shard files keep their bytes and mtime.
    """
    status = _status_line(validate_output)
    folder = _folder_options(inputs, clean_urls, include, exclude, lastmod_from, out, name)
    writer = new_writer(
        out,
        base_url,
        fmt,
        status,
        content_from=content_from,
        gzip=gzip,
        max_urls=max_urls,
        max_bytes=max_bytes,
        index=index,
        stylesheet=stylesheet,
        name=name,
        state=state,
        no_location_check=no_location_check,
        validate_output=validate_output,
    )
    start = time.perf_counter()
    try:
        with writer:
            notes = _write_all(writer, inputs, start, folder, strict_columns)
    finally:
        if status is not None:
            status.clear()
    result = writer.result
    print_table(result, gzip, time.perf_counter() - start)
    print_notes(result, notes)


def new_writer(
    out: str,
    base_url: str,
    fmt: str,
    status: StatusLine | None,
    *,
    content_from: str | None = None,
    gzip: bool,
    max_urls: int,
    max_bytes: int,
    index: str,
    stylesheet: str | None,
    name: str,
    state: str | None,
    no_location_check: bool,
    validate_output: bool,
) -> SitemapWriter:
    """The writer of the options of :func:`~.option.publishing` (``write`` and ``crawl``)."""
    try:
        return SitemapWriter(
            out,
            base_url=base_url,
            gzip=gzip,
            max_urls=max_urls,
            max_bytes=max_bytes,
            index=index,  # type: ignore[arg-type]
            format=fmt,  # type: ignore[arg-type]
            stylesheet=stylesheet,
            name=name,
            check_location=not no_location_check,
            state=state,
            content_from=content_from,
            check=_validator(base_url, status) if validate_output else None,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _status_line(validate_output: bool) -> StatusLine | None:
    """``--validate``'s progress line on a terminal (the validator imported only then)."""
    if not validate_output:
        return None
    from .validate import StatusLine

    return StatusLine.on_terminal()


def _folder_options(
    inputs: tuple[str, ...],
    clean_urls: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    lastmod_from: str,
    out: str,
    name: str,
) -> FolderOptions | None:
    """The folder reader's options; ``None`` when no input is a folder and
    ``--lastmod-from`` is its default, so that the folder source (lxml, the HTML reader)
    is imported only when used."""
    if lastmod_from == LASTMOD_DEFAULT and not any(i != "-" and os.path.isdir(i) for i in inputs):
        return None
    from ..io.sources.folder import LASTMOD_SOURCES, FolderOptions

    sources = tuple(s.strip().lower() for s in lastmod_from.split(",") if s.strip())
    if sources == ("none",):
        sources = ()
    bad = [s for s in sources if s not in LASTMOD_SOURCES]
    if bad or (not sources and lastmod_from.strip().lower() != "none"):
        raise click.BadParameter(
            f"{lastmod_from!r}: give page, git and mtime in the order wanted "
            "(comma separated), or none",
            param_hint="'--lastmod-from'",
        )
    return FolderOptions(
        clean_urls=clean_urls,
        include=include,
        exclude=exclude,
        lastmod_from=sources,
        output=out,
        name=name,
    )


def _write_all(
    writer: SitemapWriter,
    inputs: tuple[str, ...],
    start: float,
    folder: FolderOptions | None,
    strict_columns: bool,
) -> list[str]:
    """Write every input; on a terminal, with a progress line on stderr."""
    if not sys.stderr.isatty():
        return write_inputs(writer, inputs, folder=folder, strict_columns=strict_columns)
    from rich.progress import Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[progress.description]{task.description}"),
        TextColumn("{task.completed:,} URLs"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("writing", total=None, rate="")

        def tick(n: int) -> None:
            el = time.perf_counter() - start
            bar.update(task, completed=n, rate=f"{n / el:,.0f} URLs/s" if el else "")

        return write_inputs(
            writer, inputs, progress=tick, folder=folder, strict_columns=strict_columns
        )


def print_notes(result: WriteResult, notes: list[str]) -> None:
    """Notes and warnings on stderr; the changes of an incremental run on stdout."""
    for note in [*notes, *result.notes]:
        click.echo(f"sitemapkit: note: {note}", err=True)
    if result.duplicates:
        click.echo(
            f"sitemapkit: warning: {result.duplicates:,} duplicate URLs were dropped "
            f"(first kept), e.g. {result.duplicate_examples[0]}",
            err=True,
        )
    if result.removed:
        click.echo(
            f"sitemapkit: note: removed stale files of an earlier run: {', '.join(result.removed)}",
            err=True,
        )
    if result.changes:
        c = result.changes
        click.echo(
            f"changes since the last run: {c['added']:,} added, {c['changed']:,} changed, "
            f"{c['removed']:,} removed, {c['unchanged']:,} unchanged; rewritten: "
            + (", ".join(result.rewritten) or "nothing")
        )
    if result.urls == 0:
        click.echo("sitemapkit: warning: no URLs in the input; wrote an empty sitemap", err=True)


def _validator(base_url: str, status: StatusLine | None) -> Callable[[Path], list[Finding]]:
    """The ``--validate`` hook: one staged file against every offline rule, at its URL.

    On a terminal, ``status`` shows which file is being checked.
    """
    from .. import validate

    base = base_url if base_url.endswith("/") else base_url + "/"
    now = dt.datetime.now(dt.UTC)
    entries = 0

    def check(path: Path) -> list[Finding]:
        nonlocal entries
        if status is not None:
            status.show(
                f"validating the output: {path.name} ({status.documents:,} files, "
                f"{entries:,} entries done)",
                now=status.documents == 0,
            )
        report = validate(path, published_at=base + path.name, follow=False, now=now)
        entries += report.entries
        if status is not None:
            status.documents += 1
            if report.findings:
                status.clear()
        for f in report.findings:
            at = f"{path.name}:{f.line}" if f.line else path.name
            click.echo(f"sitemapkit: {f.severity}: {at}: {f.rule} {f.message}", err=True)
        return report.findings

    return check


__all__ = ["InputError", "new_writer", "print_notes", "print_table", "write"]
