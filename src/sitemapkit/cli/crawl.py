"""cli: ``sitemapkit crawl``: a running site's pages to published sitemaps, or to JSONL."""

from __future__ import annotations

import json
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from .. import FetchError, crawl
from ..core.crawler import DEFAULT_MAX_PAGES, Scope, lastmod
from ..core.finding import clip
from ..core.outcome import Conversion, PageOutcome, listed_url
from . import option
from .validate import StatusLine
from .write import new_writer, print_notes, print_table

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..core.model import Url
    from ..io.crawler import CrawlProgress


class _Progress:
    """The progress line of a crawl on a terminal: fetched, queued, listed, pages/s."""

    def __init__(self, status: StatusLine) -> None:
        self.status = status

    def update(self, p: CrawlProgress) -> None:
        rate = p.fetched / p.elapsed if p.elapsed > 0 else 0.0
        text = (
            f"crawled {p.fetched:,} pages, {p.queued:,} queued, {p.listed:,} listed "
            f"({rate:,.0f} pages/s)"
        )
        # one terminal line: a wrapped line could not be rewritten in place
        self.status.show(clip(text, shutil.get_terminal_size().columns - 1))


def _entries(
    outcomes: Iterable[PageOutcome], skipped: Conversion, first: Callable[[PageOutcome], None]
) -> Iterable[Url]:
    """The sitemap entries of the listed pages; ``first`` sees the start page's outcome."""
    started = False
    for outcome in outcomes:
        if not started:
            started = True
            first(outcome)
        if outcome.listed:
            yield listed_url(outcome, lastmod(outcome), skipped)


def _check_start(outcome: PageOutcome) -> None:
    """A start page that could not be fetched at all, or a robots.txt that could not be
    read: nothing to crawl (exit 3, and nothing is published over an earlier run's)."""
    detail = outcome.detail or ""
    if outcome.reason == "fetch failed" or detail.startswith("robots.txt could not be read"):
        what = "robots.txt" if outcome.reason != "fetch failed" else "the start page"
        raise FetchError(
            f"cannot crawl: {what} failed: {detail}",
            where=outcome.url,
            hint="check the URL and that the site answers (--timeout waits longer)",
        )


@click.command("crawl")
@click.argument("url")
@option.folder(
    "-o",
    "--output",
    "out",
    help="Folder to publish into (created if missing); not with --format jsonl.",
)
@click.option(
    "--base-url",
    help="URL at which the output folder is served [default: the site's root, URL's origin].",
)
@option.choice(
    "--format",
    "fmt",
    choices=["xml", "txt", "jsonl"],
    default="xml",
    help="XML or text sitemaps into -o, or jsonl: one record a listed page on stdout.",
)
@option.publishing
@option.choice(
    "--scope",
    choices=["host", "prefix"],
    default="host",
    help="host: the URL's scheme, host and port; prefix: also under the folder of its path.",
)
@option.count(
    "--max-pages", low=1, default=DEFAULT_MAX_PAGES, help="Pages found by links to request."
)
@click.option(
    "--max-depth",
    type=click.IntRange(0),
    default=None,
    metavar="N",
    help="Links from the start to follow at most [default: no limit].",
)
@option.count("--concurrency", low=1, default=8, help="Requests at once (4 at most to a host).")
@option.seconds("--timeout", default=30.0, above=True, help="Seconds to wait for the network.")
@click.option(
    "--include-type",
    "include_types",
    multiple=True,
    metavar="TYPE",
    help="List documents of this media type too, e.g. application/pdf (repeatable).",
)
def crawl_cmd(
    url: str,
    out: str | None,
    base_url: str | None,
    fmt: str,
    scope: str,
    max_pages: int,
    max_depth: int | None,
    concurrency: int,
    timeout: float,
    include_types: tuple[str, ...],
    **publishing: Any,
) -> None:
    """Crawl the site at URL and write sitemaps of its indexable pages.

    \b
    Examples:
      sitemapkit crawl https://example.com/ -o public/
      sitemapkit crawl https://example.com/docs/ --scope prefix -o public/docs/ \\
          --base-url https://example.com/docs/
      sitemapkit crawl https://example.com/ --format jsonl | \\
          sitemapkit write - -o public/ --base-url https://example.com/

    Links of <a href> and <area href> are followed within the URL's scheme, host and
    port; robots.txt is obeyed (Crawl-delay too) and each page is requested once.
    Listed: pages that answer 200 with HTML and may be indexed. Left out, each counted
    in the summary: noindex (meta robots, meta googlebot, X-Robots-Tag), a canonical
    elsewhere (the target is crawled), redirects (the target is crawled), 4xx and 5xx,
    robots.txt disallowed, not HTML (unless --include-type), out of scope, budget.
    lastmod is the page's own date, else its Last-Modified header, else none.
    """
    try:
        Scope(url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'URL'") from None
    if fmt == "jsonl" and out is not None:
        raise click.UsageError("--format jsonl writes records on stdout: give no -o")
    if fmt != "jsonl" and out is None:
        raise click.UsageError("give -o FOLDER to publish into (or --format jsonl)")
    status = StatusLine.on_terminal()
    progress = _Progress(status) if status is not None else None
    pages = crawl(
        url,
        scope=scope,  # type: ignore[arg-type]
        max_pages=max_pages,
        max_depth=max_depth,
        include_types=include_types,
        concurrency=concurrency,
        timeout=timeout,
        progress=progress.update if progress is not None else None,
    )
    skipped = Conversion()
    start = time.perf_counter()
    try:
        if out is None:
            _print_jsonl(_entries(pages, skipped, _check_start))
        else:
            base = base_url or Scope(url).origin + "/"
            validate = StatusLine.on_terminal() if publishing["validate_output"] else None
            writer = new_writer(out, base, fmt, validate, **publishing)
            with writer:
                for entry in _entries(pages, skipped, _check_start):
                    writer.add(entry)
    finally:
        if status is not None:
            status.clear()
    notes = [pages.summary.note(url)]
    if skipped.bad_hreflang:
        notes.append(
            f"{skipped.bad_hreflang:,} hreflang values that are not language codes skipped"
        )
    if skipped.bad_images:
        notes.append(f"{skipped.bad_images:,} image URLs that a sitemap cannot carry skipped")
    if out is None:
        for note in notes:
            click.echo(f"sitemapkit: note: {note}", err=True)
        return
    print_table(writer.result, publishing["gzip"], time.perf_counter() - start)
    print_notes(writer.result, notes)


def _print_jsonl(entries: Iterable[Url]) -> None:
    out = sys.stdout
    for entry in entries:
        out.write(json.dumps(entry.to_record(), ensure_ascii=False) + "\n")
    out.flush()


__all__ = ["crawl_cmd"]
