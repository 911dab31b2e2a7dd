"""cli: ``sitemapkit report``: validate's findings and the set's counts, as one HTML page."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import click

from .. import audit, validate
from ..lint.audit import AuditReport
from ..lint.report import ValidationReport
from ..render import Recorder, SetStats, gather, needs_fetcher, render_html
from .robots import write_atomically
from .status import EXIT_INPUT, EXIT_UNREADABLE, Exit
from .validate import StatusLine, repository_url, validate_cmd

#: ``validate``'s options, the same here (but for its output format and file).
_SHARED = [p for p in validate_cmd.params if p.name not in ("fmt", "output")]


@click.command("report", params=list(_SHARED))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="The HTML file to write (replaced in one rename).",
)
@click.option("--title", metavar="TEXT", help="The page's title (default: the targets).")
@click.option(
    "--audit",
    "with_audit",
    is_flag=True,
    help="Also audit the coverage (as `sitemapkit audit`): one TARGET, a build folder served "
    "at --published-at or a site URL; adds the audit's findings and the coverage chart.",
)
def report_cmd(
    targets: tuple[str, ...], output: str, title: str | None, with_audit: bool, **opts: Any
) -> None:
    """Validate sitemaps and write the findings as one self-contained HTML page.

    \b
    Examples:
      sitemapkit report public/sitemap.xml -o report.html \
          --published-at https://example.com/sitemap.xml
      sitemapkit report https://example.com/sitemap.xml -o report.html
      sitemapkit report a.xml b.xml.gz --ignore SM3 -o report.html
      sitemapkit report public/ --audit --published-at https://example.com/ -o report.html

    TARGET is what `sitemapkit validate` takes, with the same options. The page shows
    summary tiles, the tree of sitemaps, charts (lastmod by month, URLs per sitemap,
    findings by rule and severity, changefreq and priority), and the findings, filtered
    by rule and severity; at most 1,000 findings of a rule are in the table, the others
    counted. It embeds, as <script type="application/json" id="sitemapkit-report">, the
    JSON that `validate --format json` prints. It requests nothing: it opens from disk.

    With --audit the page also holds the audit's findings (AUD001-AUD004, SM217) and
    the coverage: URLs listed and crawled, listed only, crawled only; its JSON is then
    the one `audit --format json` prints beside validate's findings.

    Exit codes as validate's (the page is written in every case but a usage error):
    0 no finding at or above --fail-on; 1 findings at or above it; 2 usage error;
    3 a target could not be read.
    """
    folder = Path(output).resolve().parent
    if not folder.is_dir():  # said now, not after a long validation
        raise click.BadParameter(f"no folder {str(folder)!r} to write it in", param_hint="--output")
    if with_audit and len(targets) != 1:
        raise click.UsageError("--audit takes one TARGET: a build folder or a site URL")
    stats = SetStats()
    online = bool(opts["online"] or opts["check_urls"])
    recorder = None
    if needs_fetcher(list(targets), online=online):
        recorder = Recorder(stats, timeout=opts["timeout"], concurrency=opts["concurrency"])
    status = StatusLine.on_terminal()
    try:
        report = validate(
            list(targets),
            published_at=list(opts["published_at"]),
            allow_hosts=opts["allow_hosts"],
            strict=opts["strict"],
            select=list(opts["select"]) if opts["select"] else None,
            ignore=opts["ignore"],
            now=dt.datetime.now(dt.UTC),
            follow=not opts["no_follow"],
            max_findings=opts["max_findings"],
            online=opts["online"],
            check_urls=opts["check_urls"],
            robots_agent=opts["robots_agent"],
            concurrency=opts["concurrency"],
            timeout=opts["timeout"],
            check_limit=opts["check_limit"],
            fetcher=recorder,
            progress=status.checked if status is not None and online else None,
            on_document=status.document if status is not None else None,
        )
        gather(report, stats, fetcher=recorder)
        if with_audit:
            report = _audited(report, targets[0], opts)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        if recorder is not None:
            recorder.close()
        if status is not None:
            status.clear()
    write_page(output, report, stats, title=title or " ".join(targets))
    end(report, opts["fail_on"])


def write_page(output: str, report: ValidationReport, stats: SetStats, *, title: str) -> None:
    """The report page of ``report``, written to ``output`` in one rename."""
    page = render_html(report, stats, title=title, repository=repository_url())
    try:
        write_atomically(Path(output), page.encode("utf-8"))
    except OSError as exc:
        raise click.FileError(output, hint=exc.strerror or str(exc)) from None


def end(report: ValidationReport, fail_on: str) -> None:
    """validate's exit status for ``report``: 3 a target unreadable, 1 findings at or
    above ``fail_on``, else 0."""
    if report.unreadable:
        raise Exit(EXIT_UNREADABLE)
    if report.failed(fail_on):  # type: ignore[arg-type]
        raise Exit(EXIT_INPUT)


def _audited(report: ValidationReport, target: str, opts: dict[str, Any]) -> AuditReport:
    """The validation ``report`` with the audit of ``target`` beside it."""
    if not opts["published_at"] and not target.lower().startswith(("http://", "https://")):
        raise click.UsageError("--audit of a folder needs --published-at: the URL it is served at")
    audited = audit(
        target,
        base_url=opts["published_at"][0] if opts["published_at"] else None,
        select=list(opts["select"]) if opts["select"] else None,
        ignore=opts["ignore"],
        max_findings=opts["max_findings"],
    )
    return AuditReport.joined(report, audited)


__all__ = ["end", "report_cmd", "write_page"]
