"""auditing: a site URL held against its sitemaps — discovery for those, the crawler for pages.

The sitemaps are found by the one discovery flow, as ``validate URL`` finds them
(:func:`sitemapkit.validation.site.discover`: robots.txt ``Sitemap:`` lines, else the
known paths), and each is fetched once (a probe's answer is reused) and read with its
entries' positions. The pages come from the crawler, told every listed URL as an
``extra`` to request without following its links, so orphans get a verdict too; the
crawl's budgets are its own keywords (``crawl=``). :func:`_crawl_outcomes` is the one
place this module meets the crawler.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.parse import DEFAULT_MAX_BYTES
from ..errors import FetchError
from ..lint.audit import Audit, AuditReport
from ..validation.fetcher import Fetched, HttpFetcher
from ..validation.site import discover
from .sitemaps import iter_listings

if TYPE_CHECKING:
    from ..io.crawler import Crawl

__all__ = ["audit_site", "site_sitemaps"]


class _UrlSet:
    """The sitemaps of a site, fetched (a :class:`.sitemaps.Source`)."""

    def __init__(self, fetcher: HttpFetcher, known: dict[str, Fetched]) -> None:
        self.fetcher, self.known = fetcher, known

    def load(self, where: str) -> tuple[bytes, str | None]:
        got = self.known.pop(where, None) or self.fetcher.fetch(where, max_bytes=DEFAULT_MAX_BYTES)
        if got.status != 200:
            raise FetchError(f"HTTP {got.status}", where=where)
        return got.body, got.url

    def child(self, url: str) -> str:
        return url


def site_sitemaps(url: str, audit: Audit, report: AuditReport, fetcher: HttpFetcher) -> None:
    """The sitemaps the site ``url`` leads to, added to ``audit``; nothing found goes to
    ``report.unreadable`` with what was tried."""
    found = discover(url, fetcher, follow=True, max_bytes=DEFAULT_MAX_BYTES, agent="Googlebot")
    if not found.sitemaps:
        why = found.nothing.message if found.nothing is not None else "no sitemap found"
        report.unreadable.append((url, why))
        return
    known = {u: got for u, got in found.sitemaps if got is not None}
    first = [u for u, _ in found.sitemaps]
    for listing in iter_listings(_UrlSet(fetcher, known), first, report):
        report.findings += audit.add_sitemap(listing.entries)


def _crawl_outcomes(url: str, listed: Iterable[str], options: dict[str, Any]) -> Crawl:
    """The crawler's pages of the site ``url``, the listed URLs requested too without
    following their links (each URL once: the audit requests none itself)."""
    from ..io.crawler import crawl  # on first use: a folder audit never crawls

    return crawl(url, extra=listed, **options)


def audit_site(url: str, report: AuditReport, *, crawl: dict[str, Any]) -> Audit:
    """Audit the site ``url``: its sitemaps, then the crawler's pages."""
    audit = Audit(start=url)
    with HttpFetcher() as fetcher:
        site_sitemaps(url, audit, report, fetcher)
    if report.unreadable and not report.files:
        return audit
    pages = _crawl_outcomes(url, audit.listed(), crawl)
    for page in pages:
        report.findings += audit.add(page)
    report.findings += audit.finish()
    report.notes.append(pages.summary.note(f"crawl of {url}"))
    return audit
