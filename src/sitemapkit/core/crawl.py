"""core: the data of a crawl. Pure: plain values, no I/O.

The messages a :class:`~sitemapkit.core.discovery.DiscoveryFlow` exchanges with its runner
(:class:`FetchRequest` out, :class:`FetchResponse` back) and what the crawl found: a
:class:`SitemapTree` with one :class:`SitemapStatus` per sitemap, the robots.txt
(:class:`RobotsStatus`), the probes that missed (:class:`ProbeStatus`) and the references
not followed (:class:`Skipped`; grouped by listing and budget as :class:`Unread`, each said
as a finding). Every name is importable from ``sitemapkit.core.discovery``,
whose ``__all__`` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..errors import SitemapError
from .finding import Finding
from .parse import DEFAULT_MAX_BYTES, Kind

Purpose = Literal["robots", "probe", "sitemap"]
Via = Literal["target", "robots", "probe", "index"]


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """One URL the flow wants fetched.

    ``purpose`` says how the runner handles the body: ``"robots"`` is read whole (at most
    :data:`~sitemapkit.core.robots.MAX_ROBOTS_BYTES`) into :attr:`FetchResponse.body`;
    ``"probe"`` and ``"sitemap"`` are streamed through a parser whose decompressed size is
    capped at ``max_bytes``. ``parent`` is the URL of the robots.txt or index that listed
    it, ``depth`` its nesting below the sitemaps found directly (0). ``order`` is its place
    in the crawl's document order (its parent's, then its position in the listing): the
    records of a crawl come out in that order (:meth:`DiscoveryFlow.blocked`).
    """

    url: str
    purpose: Purpose
    parent: str | None = None
    depth: int = 0
    via: Via = "target"
    max_bytes: int = DEFAULT_MAX_BYTES
    order: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """What the runner learned from fetching one :class:`FetchRequest`.

    ``status`` is the final HTTP status (``None`` when no response arrived); ``final_url``
    the URL after redirects. For robots.txt, ``body`` holds the bytes read and ``truncated``
    says reading stopped at the size cap. For sitemaps, ``kind``, ``size`` (bytes after
    decompression), ``entries`` and ``findings`` come from the parser, ``transferred`` counts
    the bytes received. ``error`` is what stopped the fetch or the parse, ``elapsed`` the
    seconds it took (the runner owns the clock), ``from_cache`` says a 304 reused a stored
    body.
    """

    request: FetchRequest
    final_url: str
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    truncated: bool = False
    kind: Kind | None = None
    size: int = 0
    transferred: int = 0
    entries: int = 0
    findings: tuple[Finding, ...] = ()
    error: SitemapError | None = None
    elapsed: float = 0.0
    from_cache: bool = False


@dataclass(frozen=True, slots=True)
class SitemapStatus:
    """The outcome of one sitemap (or index, feed, text sitemap) of a crawl.

    ``url`` as listed, ``parent`` the robots.txt or index that listed it (``None`` for the
    target and probes), ``via`` how it was found, ``status`` the final HTTP status,
    ``bytes`` its size after decompression, ``entries`` the entries read (kept or not),
    ``findings`` the parser's and the crawl's (SM012 fetch status, SM502 nested index, SM506
    cycle, SM507 duplicate child), ``elapsed`` seconds, ``error`` what stopped it.
    ``duplicate_of`` is set when it redirected to a URL the crawl had already read.
    """

    url: str
    parent: str | None
    status: int | None
    bytes: int
    entries: int
    findings: tuple[Finding, ...]
    elapsed: float
    error: SitemapError | None
    final_url: str
    kind: Kind | None = None
    depth: int = 0
    via: Via = "target"
    transferred: int = 0
    from_cache: bool = False
    duplicate_of: str | None = None

    @property
    def ok(self) -> bool:
        """True when it was fetched and read to the end (findings aside)."""
        return self.error is None and self.duplicate_of is None


@dataclass(frozen=True, slots=True)
class RobotsStatus:
    """The robots.txt of a crawl: its fetch status and the sitemaps it lists."""

    url: str
    final_url: str
    status: int | None
    sitemaps: tuple[str, ...]
    findings: tuple[Finding, ...]
    elapsed: float
    error: SitemapError | None


@dataclass(frozen=True, slots=True)
class ProbeStatus:
    """A well-known path that was tried and held no sitemap."""

    url: str
    final_url: str
    status: int | None
    error: SitemapError | None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A sitemap reference that was not followed, and why (a budget, a bad URL)."""

    url: str
    parent: str | None
    reason: str


@dataclass(slots=True)
class Unread:
    """The sitemaps one listing (an index, a robots.txt; ``None``: the target) named that
    one budget kept from being read: how many, and the first of them."""

    parent: str | None
    reason: str
    first: str
    count: int = 1

    def finding(self, target: str) -> Finding:
        """SM012 (the sitemaps were not fetched), naming how many and which first.

        >>> print(Unread("https://e.com/i.xml", "max_sitemaps is spent", "https://e.com/2.xml",
        ...              3).finding("https://e.com/").message)
        3 sitemaps it lists were not read: max_sitemaps is spent (the first: 'https://e.com/2.xml')
        """
        what = "sitemap it lists was" if self.count == 1 else "sitemaps it lists were"
        return Finding(
            "SM012",
            "warning",
            f"{self.count:,} {what} not read: {self.reason} (the first: {self.first!r})",
            self.parent or target,
        )


@dataclass(slots=True)
class SitemapTree:
    """Everything a crawl found: robots.txt, every sitemap with its status, the probes
    that missed and the references that were not followed.

    >>> tree = SitemapTree("https://example.com/")
    >>> tree.urls, tree.ok
    (0, True)
    """

    target: str
    robots: RobotsStatus | None = None
    sitemaps: list[SitemapStatus] = field(default_factory=list)
    probes: list[ProbeStatus] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    skipped_count: int = 0
    #: Every reference not followed, grouped by listing and reason (all of them counted).
    unread: list[Unread] = field(default_factory=list)

    def unread_findings(self) -> list[Finding]:
        """One SM012 finding per listing and budget that kept sitemaps from being read."""
        return [u.finding(self.target) for u in self.unread]

    @property
    def urls(self) -> int:
        """Entries read from sitemaps that are not indexes."""
        return sum(s.entries for s in self.sitemaps if s.kind != "sitemapindex")

    @property
    def errors(self) -> list[SitemapStatus]:
        """The sitemaps that could not be fetched or read to the end."""
        return [s for s in self.sitemaps if s.error is not None]

    @property
    def ok(self) -> bool:
        return not self.errors

    def children(self, url: str) -> list[SitemapStatus]:
        """The sitemaps listed by the index (or robots.txt) at ``url``."""
        return [s for s in self.sitemaps if s.parent == url]

    def nothing_found(self) -> Finding | None:
        """When the crawl found no sitemap at all: a finding (SM012) that says what was
        tried (robots.txt and its status, each probed path and its status); else
        ``None``. A sitemap that was found has its own status and findings (SM012 when it
        could not be fetched), so it is not repeated here.

        >>> tree = SitemapTree("https://example.com/")
        >>> tree.robots = RobotsStatus("https://example.com/robots.txt",
        ...     "https://example.com/robots.txt", 404, (), (), 0.0, None)
        >>> tree.probes.append(ProbeStatus("https://example.com/sitemap.xml",
        ...     "https://example.com/sitemap.xml", 404, None))
        >>> print(tree.nothing_found().message)  # doctest: +NORMALIZE_WHITESPACE
        No sitemap found for https://example.com/: https://example.com/robots.txt HTTP 404;
        https://example.com/sitemap.xml HTTP 404
        """
        if self.sitemaps:
            return None
        tried: list[str] = []
        robots = self.robots
        if robots is not None:
            answer = _answer(robots.status, robots.error)
            if robots.status is not None and 200 <= robots.status < 300:
                lines = len(robots.sitemaps)
                answer += f" ({lines} Sitemap: lines)" if lines else " (no Sitemap: line)"
            elif robots.status is None and not self.probes:
                answer += " (the host did not answer: no known path was probed)"
            tried.append(f"{robots.url} {answer}")
        tried.extend(f"{p.url} {_answer(p.status, p.error)}" for p in self.probes)
        tried.extend(f"{s.url} not followed: {s.reason}" for s in self.skipped)
        return Finding(
            "SM012",
            "warning",
            f"No sitemap found for {self.target}: " + ("; ".join(tried) or "nothing was tried"),
            self.target,
        )


def _answer(status: int | None, error: SitemapError | None) -> str:
    if error is not None and (status is None or 200 <= status < 300):
        return error.message
    return f"HTTP {status}"
