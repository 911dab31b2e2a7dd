"""cli: ``sitemapkit submit indexnow``: notify IndexNow engines of added, changed, removed URLs.

No "ping" command: the sitemap ping endpoints of Google (2023) and Bing (2022) are retired
(``spec/DISCOVERY.md`` §2); list sitemaps in robots.txt (``sitemapkit robots``) instead.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from .. import Diff, Finding, InputError, diff
from ..core.indexnow import (
    DEFAULT_ENDPOINT,
    MAX_URLS_PER_REQUEST,
    check_host,
    check_key,
    check_key_location,
    iter_batches,
    request_body,
)
from . import option
from .status import EXIT_INPUT, EXIT_UNREADABLE, Exit

if TYPE_CHECKING:
    from ..io.indexnow import BatchResult, SubmitResult

__all__ = ["submit"]


@click.group("submit")
def submit() -> None:
    """Notify search engines of changed URLs (IndexNow)."""


def _stdin_urls() -> Iterator[str]:
    for raw in sys.stdin:
        line = raw.strip()
        if line and not line.startswith("#"):
            yield line


def _diff_urls(changes: Diff) -> Iterator[str]:
    # IndexNow: "submit … URLs that were added, updated or deleted"; deleted ones let
    # the engines see the 404/410 sooner.
    for change in changes:
        yield change.loc


def _print_findings(findings: list[Finding]) -> None:
    for f in findings:
        click.echo(f"sitemapkit: {f}", err=True)


def _on_batch(br: BatchResult) -> None:
    tries = f" (after {br.attempts} attempts)" if br.attempts > 1 else ""
    click.echo(f"sitemapkit: batch {br.number}: {br.urls:,} URLs: {br.message}{tries}", err=True)


@submit.command("indexnow")
@click.argument("urls", nargs=-1, metavar="[URL]... | -")
@click.option("--key", required=True, help="Your IndexNow key (8-128 of a-z, A-Z, 0-9, -).")
@click.option("--host", required=True, help="The host whose URLs are submitted.")
@click.option(
    "--key-location",
    metavar="URL",
    help="URL of the key file when it is not https://HOST/KEY.txt; it must be on HOST and "
    "then covers only the URLs in its folder.",
)
@click.option(
    "--from-diff",
    nargs=2,
    metavar="OLD NEW",
    help="Submit the URLs added, changed or removed from OLD to NEW (as `sitemapkit diff`).",
)
@option.file(
    "--changed-since",
    "state",
    metavar="STATE",
    help="Submit the URLs that the last `write --state STATE` run added, changed or removed.",
)
@click.option(
    "--endpoint",
    default=DEFAULT_ENDPOINT,
    show_default=True,
    metavar="URL",
    help="The IndexNow endpoint (e.g. https://www.bing.com/indexnow); one engine shares "
    "the URLs with the others.",
)
@click.option(
    "--check-key",
    "verify_key",
    is_flag=True,
    help="Fetch the key file first and submit nothing if it does not hold the key.",
)
@option.count(
    "--batch-size",
    low=1,
    high=MAX_URLS_PER_REQUEST,
    default=MAX_URLS_PER_REQUEST,
    help="URLs per POST (the protocol allows at most 10,000).",
)
@option.count(
    "--retries",
    default=4,
    help="Retries of a batch on 429, 5xx or no answer, with exponential backoff.",
)
@option.seconds(
    "--backoff",
    default=1.0,
    help="Seconds before the first retry; doubles each time. Retry-After wins.",
)
@option.seconds(
    "--max-retry-after",
    default=120.0,
    help="Give up rather than wait longer than this many seconds.",
)
@option.seconds("--timeout", low=0.1, default=30.0)
@click.option("--dry-run", is_flag=True, help="Print each POST body (JSON lines); send nothing.")
def indexnow(
    urls: tuple[str, ...],
    key: str,
    host: str,
    key_location: str | None,
    from_diff: tuple[str, str] | None,
    state: str | None,
    endpoint: str,
    verify_key: bool,
    batch_size: int,
    retries: int,
    backoff: float,
    max_retry_after: float,
    timeout: float,
    dry_run: bool,
) -> None:
    """Submit URLs to IndexNow (Bing, Yandex, Naver, Seznam, Yep, …; not Google).

    The URLs come from the arguments, from stdin (-, one per line), from a diff of
    two sitemap sets (--from-diff OLD NEW), or from the last incremental write run
    (--changed-since STATE: the URLs it added, changed or removed). Each URL must be
    on HOST (and in the key file's folder with --key-location); others are left out
    and reported. They are
    sent as JSON POSTs of up to 10,000 URLs; 429 and 5xx answers are retried with
    backoff, honouring Retry-After; the first rejection (400, 403, 422) stops.

    The engines verify the key by fetching https://HOST/KEY.txt (or --key-location),
    a UTF-8 text file holding only the key. --check-key fetches it first.

    \b
    Examples:
      sitemapkit submit indexnow --key 26ecd1ada8034912a62634cc4e3ddd7e \\
          --host www.example.com https://www.example.com/new-page
      sitemapkit read public/sitemap.xml --format urls | \\
          sitemapkit submit indexnow --key KEY --host www.example.com -
      sitemapkit submit indexnow --key KEY --host www.example.com --check-key \\
          --from-diff old/ public/

    Exit codes: 0 every batch received (200/202) or nothing to submit; 1 a batch was
    rejected, a URL was left out, or the key file does not hold the key; 2 usage;
    3 the endpoint could not be reached (or gave up after the retries).
    """
    _check_usage(urls, from_diff, state, endpoint)
    changes: Diff | None = None
    try:
        host = check_host(host)
        check_key(key)
        if key_location is not None:
            key_location = check_key_location(key_location, host)
        if from_diff:
            changes = diff(*from_diff, parallel=True)
        source = _source(urls, changes, state)
        if dry_run:
            _dry_run(source, host, key, key_location, batch_size)
            return
        from ..io.indexnow import submit_indexnow  # httpx: imported only when sending

        result = submit_indexnow(
            source,
            host=host,
            key=key,
            key_location=key_location,
            endpoint=endpoint,
            check_key_file=verify_key,
            batch_size=batch_size,
            retries=retries,
            backoff=backoff,
            max_retry_after=max_retry_after,
            timeout=timeout,
            on_batch=_on_batch,
        )
    finally:
        if changes is not None:
            changes.close()
    _summarize(result, endpoint)


def _check_usage(
    urls: tuple[str, ...], from_diff: tuple[str, str] | None, state: str | None, endpoint: str
) -> None:
    if sum(map(bool, (urls, from_diff, state))) > 1:
        raise click.UsageError("give URLs, --from-diff or --changed-since, only one of them")
    if not (from_diff or urls or state):
        raise click.UsageError(
            "no URLs: give URLs, - for stdin, --from-diff OLD NEW or --changed-since STATE"
        )
    if "-" in urls and len(urls) > 1:
        raise click.UsageError("- (stdin) cannot be combined with URL arguments")
    if not endpoint.startswith(("https://", "http://")):
        raise click.UsageError(f"--endpoint {endpoint!r} is not an http(s) URL")


def _source(urls: tuple[str, ...], changes: Diff | None, state: str | None) -> Iterator[str]:
    """The URLs to submit: of a diff, of the last incremental run, of stdin or the arguments."""
    if changes is not None:
        return _diff_urls(changes)
    if state is not None:
        from ..io.state import changed_in_last_run

        try:
            return iter(list(changed_in_last_run(state)))
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"cannot read the state file: {exc}", where=state) from None
    if urls == ("-",):
        return _stdin_urls()
    return iter(urls)


def _dry_run(
    source: Iterator[str], host: str, key: str, key_location: str | None, batch_size: int
) -> None:
    """Print each POST body as a JSON line; status 1 when a URL had to be left out."""
    findings: list[Finding] = []
    out = sys.stdout.buffer
    for batch in iter_batches(
        source, host=host, key_location=key_location, size=batch_size, findings=findings
    ):
        out.write(request_body(host, key, batch, key_location) + b"\n")
    out.flush()
    _print_findings(findings)
    if any(f.severity == "error" for f in findings):
        raise Exit(EXIT_INPUT)


def _summarize(result: SubmitResult, endpoint: str) -> None:
    """The findings and one summary line on stderr; the status the batches earned."""
    _print_findings(result.findings)
    sent = len(result.batches)
    if not sent and not result.findings:
        click.echo("sitemapkit: nothing to submit", err=True)
    else:
        click.echo(
            f"sitemapkit: {result.submitted:,} URLs received by {endpoint} "
            f"in {sum(1 for b in result.batches if b.ok)} of {sent} batches",
            err=True,
        )
    if result.stopped == "unreachable":
        raise Exit(EXIT_UNREADABLE)
    if not result.ok:
        raise Exit(EXIT_INPUT)
