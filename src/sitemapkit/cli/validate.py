"""cli: ``sitemapkit validate``: check sitemaps, robots.txt, build folders, URLs and sites."""

from __future__ import annotations

import datetime as dt
import sys
import time
from pathlib import Path

import click

from .. import ValidationReport, __version__, validate
from ..lint.report import RENDERERS
from . import option
from .status import EXIT_INPUT, EXIT_UNREADABLE, Exit


@click.command("validate")
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@click.option(
    "--published-at",
    "published_at",
    multiple=True,
    metavar="URL",
    help="The URL a local file or folder is published at (enables the location rules and "
    "finds an index's children beside it by their URLs). Once for the first local target, "
    "or once per local target.",
)
@option.choice(
    "--format",
    "fmt",
    choices=list(RENDERERS),
    default="text",
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
@option.choice(
    "--fail-on",
    choices=["error", "warning"],
    default="error",
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
@option.count(
    "--max-findings",
    default=1_000,
    metavar="N",
    help="List at most N findings per rule and document (the first ones); the others "
    "are counted in the summary. 0 lists all that are kept: each pass keeps at most "
    "10,000 of a rule per document.",
)
@click.option(
    "--online",
    is_flag=True,
    help="Also check each sitemap's URL as a crawler meets it (SM012): a local file's "
    "published copy must answer 200, robots.txt must allow it, no login. Off by default: "
    "without it no local file is fetched.",
)
@click.option(
    "--check-urls",
    is_flag=True,
    help="Implies --online. Request every <loc>, hreflang alternate and video URL (HEAD, "
    "GET when needed): redirects, errors, robots.txt blocks, noindex, canonical elsewhere "
    "(SM217), redirecting alternates (HRE908), video URLs blocked or behind a login "
    "(VID719), thumbnail size (VID718).",
)
@click.option(
    "--robots-agent",
    default="Googlebot",
    show_default=True,
    metavar="TOKEN",
    help="The crawler whose robots.txt rules, X-Robots-Tag and meta robots tags apply. "
    "Requests still identify as sitemapkit.",
)
@option.count(
    "--concurrency",
    low=1,
    default=8,
    help="Online requests in flight at once (at most 4 per host).",
)
@option.seconds(
    "--timeout",
    above=True,
    default=10.0,
    metavar="SECONDS",
    help="Per request: fetching URL targets and their children, and the online checks.",
)
@click.option(
    "--check-limit",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Check at most N URLs for --check-urls; the rest is noted as not checked.",
)
@option.file(
    "-o",
    "--output",
    writable=True,
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
    max_findings: int,
    online: bool,
    check_urls: bool,
    robots_agent: str,
    concurrency: int,
    timeout: float,
    check_limit: int | None,
    output: str | None,
) -> None:
    """Validate each TARGET and what it leads to, as one set: a sitemap file, a robots.txt
    (its Sitemap: lines, then the sitemaps it lists), a folder (its robots.txt, else every
    sitemap file in it, indexes first), a sitemap URL, a robots.txt URL, or a site (its
    robots.txt, else the known sitemap paths). The targets are those `read` takes.

    \b
    Examples:
      sitemapkit validate sitemap.xml
      sitemapkit validate public/sitemap.xml --published-at https://example.com/sitemap.xml
      sitemapkit validate https://example.com/
      sitemapkit validate public/ public/robots.txt
      sitemapkit validate https://example.com/sitemap.xml --format sarif -o sitemap.sarif
      sitemapkit validate a.xml b.xml.gz --ignore SM3 --fail-on warning --format github
      sitemapkit validate https://example.com/sitemap.xml --check-urls --check-limit 500

    A local index finds its children beside it: under its URL (--published-at), else by
    file name (a note names the rules that needed its URL). A child not there is noted,
    not an error. --select/--ignore take the robots.txt rules (RB003-RB011) too.

    --online and --check-urls report warnings (SM012, SM217, HRE908, VID718, VID719);
    robots.txt of each site is read once, and a disallowed URL is not requested. An
    HTML page costs a HEAD and a GET that reads only its <head>.

    Exit codes: 0 no finding at or above --fail-on; 1 findings at or above it;
    2 usage error; 3 a target could not be read, or led to no sitemap (the SM012
    finding says what was tried).
    """
    status = StatusLine.on_terminal()
    try:
        report = validate(
            list(targets),
            published_at=list(published_at),
            allow_hosts=allow_hosts,
            strict=strict,
            select=list(select) if select else None,
            ignore=ignore,
            now=dt.datetime.now(dt.UTC),
            follow=not no_follow,
            max_findings=max_findings,
            excerpts=fmt == "text",
            online=online,
            check_urls=check_urls,
            robots_agent=robots_agent,
            concurrency=concurrency,
            timeout=timeout,
            check_limit=check_limit,
            progress=status.checked if status is not None and (online or check_urls) else None,
            on_document=status.document if status is not None else None,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        if status is not None:
            status.clear()
    _emit(report, fmt, fail_on, output)
    if report.unreadable:
        raise Exit(EXIT_UNREADABLE)
    if report.failed(fail_on):  # type: ignore[arg-type]
        raise Exit(EXIT_INPUT)


def _emit(report: ValidationReport, fmt: str, fail_on: str, output: str | None) -> None:
    """The report in ``fmt``, to ``output`` or stdout (styled on a terminal)."""
    tty = output is None and sys.stdout.isatty()
    text = RENDERERS[fmt](
        report,
        style=click.style if tty else None,
        fail_on=fail_on,
        tool_version=__version__,
        repository=repository_url() if fmt == "sarif" else None,
    )
    if output is None:
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text, encoding="utf-8")


def repository_url() -> str | None:
    """The repository URL of the installed package's metadata (``[project.urls]``:
    ``Repository``, ``Source`` or ``Homepage``), against which SARIF's ``helpUri``
    resolve; ``None`` (they stay relative, ``docs/rules.md#sm301``) when none is set."""
    from importlib import metadata

    try:
        entries = metadata.metadata("sitemapkit").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = str(entry).partition(",")
        urls[label.strip().lower()] = url.strip()
    for label in ("repository", "source", "source code", "homepage"):
        if urls.get(label):
            return urls[label]
    return None


class StatusLine:
    """One line of stderr rewritten in place while work goes on, at most ten times a second.

    Only on a terminal (:meth:`on_terminal`): piped or redirected output stays plain.
    """

    def __init__(self) -> None:
        self._last = 0.0
        self._shown = False
        self.documents = 0  # documents validated so far (write --validate counts its own)

    @classmethod
    def on_terminal(cls) -> StatusLine | None:
        """A status line when stderr is a terminal, else ``None``."""
        return cls() if sys.stderr.isatty() else None

    def show(self, text: str, *, now: bool = False) -> None:
        """Show ``text`` (``now``: even if the last update was under 0.1 s ago)."""
        at = time.monotonic()
        if not now and at - self._last < 0.1:
            return
        self._last = at
        self._shown = True
        click.echo("\r\033[K" + text, nl=False, err=True)

    def checked(self, done: int, queued: int) -> None:
        """The online checks' progress: ``checked N/M URLs``."""
        self.show(f"checked {done:,}/{queued:,} URLs", now=done >= queued)

    def document(self, name: str, done: int, entries: int) -> None:
        """Validation's progress as a document starts (``validate(on_document=...)``)."""
        self.show(
            f"validating {Path(name).name or name} ({done:,} sitemaps, {entries:,} entries done)",
            now=done == 0,
        )

    def clear(self) -> None:
        """Erase the line (if anything was shown)."""
        if self._shown:
            click.echo("\r\033[K", nl=False, err=True)
            self._shown = False


__all__ = ["StatusLine", "validate_cmd"]
