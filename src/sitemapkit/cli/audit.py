"""cli: ``sitemapkit audit``: a site's pages held against its sitemaps (AUD001-AUD004, SM217)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import audit
from ..io.sources.folder import FolderOptions
from ..render import SetStats, gather
from .crawl import crawl_cmd
from .report import end, write_page
from .validate import _emit, validate_cmd

#: ``validate``'s options that mean the same here.
_SHARED = [
    p
    for p in validate_cmd.params
    if p.name in ("fmt", "select", "ignore", "fail_on", "max_findings", "output")
]


#: ``crawl``'s budgets, for a site URL.
_CRAWL = [
    p
    for p in crawl_cmd.params
    if p.name in ("scope", "max_pages", "max_depth", "concurrency", "timeout")
]


@click.command("audit", params=[*_SHARED, *_CRAWL])
@click.argument("target", metavar="TARGET")
@click.option(
    "--base-url",
    metavar="URL",
    help="The URL a build folder is served at (required for a folder).",
)
@click.option(
    "--clean-urls",
    is_flag=True,
    help="Folder: pages are served without .html (about.html at …/about), as `write` lists them.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Folder: leave these files or folders out, as `write` does (repeatable).",
)
@click.option(
    "--html",
    "html",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="Also write the report page, with the coverage chart (as `report --audit`).",
)
def audit_cmd(
    target: str,
    base_url: str | None,
    clean_urls: bool,
    exclude: tuple[str, ...],
    html: str | None,
    **opts: Any,
) -> None:
    """Hold a site's pages against its sitemaps: which indexable pages no sitemap lists
    (AUD001), which listed URLs no link reaches (AUD002), which listed URLs are not
    indexable and why (SM217), lastmods that drift from the page (AUD003), and URLs
    listed in several sitemaps (AUD004).

    \b
    Examples:
      sitemapkit audit public/ --base-url https://example.com/
      sitemapkit audit public/ --base-url https://example.com/ --format json
      sitemapkit audit public/ --base-url https://example.com/ --html audit.html
      sitemapkit audit https://example.com/

    TARGET is a build folder served at --base-url (offline: the sitemaps its robots.txt
    names, else its sitemap*.xml* files, and its pages as `write` reads them) or a site
    URL (its sitemaps through discovery, its pages crawled within --scope, --max-pages,
    --max-depth; every listed URL is requested once, its links not followed).

    Exit codes as validate's: 0 no finding at or above --fail-on; 1 findings at or
    above it; 2 usage error; 3 the target could not be read, or led to no sitemap.
    """
    if html is not None and not Path(html).resolve().parent.is_dir():
        raise click.BadParameter(f"no folder to write {html!r} in", param_hint="--html")
    try:
        report = audit(
            target,
            base_url=base_url,
            select=list(opts["select"]) if opts["select"] else None,
            ignore=opts["ignore"],
            max_findings=opts["max_findings"],
            folder=FolderOptions(clean_urls=clean_urls, exclude=exclude),
            crawl={str(p.name): opts[str(p.name)] for p in _CRAWL},
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    _emit(report, opts["fmt"], opts["fail_on"], opts["output"])
    if html is not None:
        stats = SetStats()
        gather(report, stats)
        write_page(html, report, stats, title=f"audit of {target}")
    end(report, opts["fail_on"])


__all__ = ["audit_cmd"]
