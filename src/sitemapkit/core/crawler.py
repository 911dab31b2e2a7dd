"""core: the crawl of a running site as a flow. Pure: never does I/O, never reads the clock.

:class:`CrawlFlow` owns every decision of a crawl and none of its I/O, in the manner of
:mod:`~sitemapkit.core.discovery`: the runner (:mod:`sitemapkit.io.crawler`) asks it for
:class:`PageRequest` objects (:meth:`~CrawlFlow.next_requests`), fetches them however it
likes and answers each with a :class:`PageAnswer` (:meth:`~CrawlFlow.on_answer`). The flow
decides:

* **scope**: the start URL's scheme, host and port, or (``scope="prefix"``) the folder of
  its path too (:class:`Scope`); a URL out of scope is judged, never requested;
* **one page, one request**: every URL in :func:`~.urls.normalize`'s comparison form
  (``/café/`` and ``/caf%C3%A9/`` are one page) enters a seen set once;
* **robots.txt** first (RFC 9309: a 4xx allows everything, a 5xx or no answer disallows
  everything), for the crawler's agent and ``*``; a disallowed URL is never requested;
  its ``Crawl-delay`` is handed to the runner (:attr:`CrawlFlow.crawl_delay`);
* **budgets**: at most ``max_pages`` pages found by links are requested, none deeper than
  ``max_depth``; what a budget stops is judged ``budget``, so a calendar trap (endless
  ``?month=`` links) ends and the summary says so;
* **what is listed and why not** (:func:`judge`): a page that answers 200 with HTML and
  may be indexed is listed; else one of :data:`~.outcome.REASONS`;
* **what is followed**: the links of every HTML page that answered 200 (a noindex page's
  too; not with ``nofollow``), a canonical target and a redirect target.

URLs given as ``extra`` (an audit's sitemap URLs) are requested after the pages links
reach, if no link reached them; their links are not followed (their depth is ``None``)
and the page budget does not count them: the caller's list bounds them.

>>> flow = CrawlFlow("https://example.com/")
>>> [r.url for r in flow.next_requests(8)]
['https://example.com/robots.txt']
"""

from __future__ import annotations

import datetime as dt
import email.utils
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from protego import Protego

from .outcome import PageOutcome, left_out_text
from .page import Page
from .probe import is_html, is_noindex, redirect_target, robots_directives, robots_state
from .robots import robots_url
from .urls import iri_to_uri, normalize
from .w3cdate import format_lastmod

__all__ = [
    "DEFAULT_MAX_PAGES",
    "CrawlFlow",
    "CrawlSummary",
    "Frontier",
    "PageAnswer",
    "PageRequest",
    "Scope",
    "Seen",
    "http_date",
    "judge",
    "lastmod",
]

#: Pages found by links that a crawl requests at most, unless told otherwise.
DEFAULT_MAX_PAGES: Final = 100_000
#: The robots.txt group a crawl reads (the product token of its User-Agent), else ``*``.
AGENT: Final = "sitemapkit"
_REDIRECTS: Final = frozenset([301, 302, 303, 307, 308])

ScopeKind = Literal["host", "prefix"]


@dataclass(frozen=True, slots=True)
class PageRequest:
    """Fetch ``url`` (GET, no redirect followed). ``depth``: links from the start
    (``None`` for an extra URL); ``robots``: this is the site's robots.txt."""

    url: str
    depth: int | None = 0
    robots: bool = False


@dataclass(frozen=True, slots=True)
class PageAnswer:
    """How a request ended: its ``status`` (``None`` without an answer, ``error`` then
    says why), the headers the flow reads, and the parsed :class:`~.page.Page` of an HTML
    body (``None`` when no body was read). ``body`` is the robots.txt's text."""

    request: PageRequest
    status: int | None = None
    content_type: str | None = None
    location: str | None = None
    x_robots_tag: tuple[str, ...] = ()
    last_modified: str | None = None
    page: Page | None = None
    body: bytes = b""
    error: str | None = None


class Seen(Protocol):
    """The URLs a crawl has judged; :meth:`add` is true for a URL not seen before."""

    def add(self, url: str) -> bool: ...

    def __len__(self) -> int: ...


class Frontier(Protocol):
    """The URLs waiting for a request, first in, first out (breadth first)."""

    def push(self, url: str, depth: int | None) -> None: ...

    def pop(self) -> tuple[str, int | None] | None: ...

    def __len__(self) -> int: ...


class _MemorySeen:
    def __init__(self) -> None:
        self._urls: set[str] = set()

    def add(self, url: str) -> bool:
        n = len(self._urls)
        self._urls.add(url)
        return len(self._urls) > n

    def __len__(self) -> int:
        return len(self._urls)


class _MemoryFrontier:
    def __init__(self) -> None:
        self._queue: deque[tuple[str, int | None]] = deque()

    def push(self, url: str, depth: int | None) -> None:
        self._queue.append((url, depth))

    def pop(self) -> tuple[str, int | None] | None:
        return self._queue.popleft() if self._queue else None

    def __len__(self) -> int:
        return len(self._queue)


class Scope:
    """Which URLs a crawl of ``start`` may request: the same scheme, host and port
    (``kind="host"``), and under the folder of its path with ``kind="prefix"``.

    >>> s = Scope("https://Example.com:443/docs/intro", "prefix")
    >>> s.why_not("https://example.com/docs/api"), s.why_not("https://example.com/blog/")
    (None, 'not under https://example.com/docs/')
    >>> Scope("https://example.com/").why_not("http://example.com/")
    'not on https://example.com'
    """

    def __init__(self, start: str, kind: ScopeKind = "host") -> None:
        url = normalize(iri_to_uri(start))
        scheme, sep, rest = url.partition("://")
        if not sep or scheme not in ("http", "https") or not rest.split("/", 1)[0]:
            raise ValueError(f"{start!r} is not an http(s) URL with a host")
        origin = url[: len(scheme) + 3 + len(rest.split("/", 1)[0])]
        self.origin = origin
        path = url[len(origin) :].split("?", 1)[0] or "/"
        self.prefix = origin + (path[: path.rfind("/") + 1] if kind == "prefix" else "/")
        self.kind = kind

    def why_not(self, url: str) -> str | None:
        """``None`` when ``url`` (comparison form) is in scope, else why not."""
        if url.startswith(self.prefix):
            return None
        if not url.startswith(self.origin + "/"):
            return f"not on {self.origin}"
        return f"not under {self.prefix}"


def http_date(value: str | None) -> str | None:
    """An HTTP date (``Last-Modified``) as a W3C Datetime; ``None`` when it is no date.

    >>> http_date("Wed, 01 May 2024 10:00:00 GMT"), http_date("yesterday")
    ('2024-05-01T10:00:00+00:00', None)
    """
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110: "HTTP-date is case sensitive and … GMT"
        when = when.replace(tzinfo=dt.UTC)
    return format_lastmod(when.astimezone(dt.UTC).replace(microsecond=0))


def lastmod(outcome: PageOutcome) -> str | None:
    """The lastmod of a listed page: its own date, else ``Last-Modified``, else none
    (never the time of the crawl)."""
    return outcome.modified or outcome.last_modified


def _media(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def judge(
    answer: PageAnswer, *, include_types: Iterable[str] = (), agent: str = AGENT
) -> PageOutcome:
    """The outcome of one answered page request: listed, or left out and why.

    >>> from .page import read_page
    >>> r = PageRequest("https://example.com/a")
    >>> judge(PageAnswer(r, 404)).reason, judge(PageAnswer(r, 301, location="/b")).detail
    ('error status', 'https://example.com/b')
    >>> page = read_page(b'<link rel="canonical" href="/b">', r.url)
    >>> judge(PageAnswer(r, 200, "text/html", page=page)).reason
    'canonical elsewhere'
    """
    status = answer.status
    if status is None:
        return _outcome(answer, "fetch failed", answer.error)
    if status in _REDIRECTS and answer.location is not None:
        return _outcome(answer, "redirect", _redirect(answer) or answer.location)
    if status != 200:
        return _outcome(answer, "error status", f"HTTP {status}")
    media = _media(answer.content_type)
    if not is_html(answer.content_type) and media not in set(include_types):
        return _outcome(answer, "not HTML", media or None)
    page = answer.page
    if page is None:  # a document listed as it is: only its header speaks for it
        for value in answer.x_robots_tag:
            if any(is_noindex(robots_directives([value], a)) for a in (agent, "googlebot")):
                return _outcome(answer, "noindex", f"X-Robots-Tag: {value.strip()}")
        return _outcome(answer, None, None)
    if page.noindex is not None:
        return _outcome(answer, "noindex", page.noindex, page)
    if page.canonical_elsewhere():
        target = normalize(page.canonical or "")
        if target != answer.request.url:
            return _outcome(answer, "canonical elsewhere", target, page)
    return _outcome(answer, None, None, page)


def _outcome(
    answer: PageAnswer, reason: str | None, detail: str | None, page: Page | None = None
) -> PageOutcome:
    req = answer.request
    return PageOutcome(
        req.url,
        loc=req.url if reason is None else None,
        reason=reason,
        detail=detail,
        status=answer.status,
        images=page.images if page is not None else (),
        alternates=page.alternates if page is not None else (),
        modified=page.modified if page is not None else None,
        last_modified=http_date(answer.last_modified),
        links=page.links if page is not None else (),
        depth=req.depth,
    )


def _redirect(answer: PageAnswer) -> str | None:
    """The comparison form of a redirect's target, or ``None`` when it is no http(s) URL."""
    target = redirect_target(answer.status or 0, answer.location, answer.request.url)
    if not target or not target.startswith(("http://", "https://")):
        return None
    try:
        return normalize(iri_to_uri(target))
    except ValueError:
        return None


@dataclass(slots=True)
class CrawlSummary:
    """What a crawl did: requests answered (``fetched``), pages listed, pages left out by
    reason with an example each, the ``robots`` answer's meaning when not plain, and where
    the crawl ``moved`` when its start redirects to another site."""

    fetched: int = 0
    listed: int = 0
    left_out: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    robots: str | None = None
    moved: str | None = None

    def count(self, outcome: PageOutcome) -> None:
        if outcome.status is not None:
            self.fetched += 1
        if outcome.listed:
            self.listed += 1
            return
        reason = outcome.reason or "fetch failed"
        self.left_out[reason] += 1
        if reason not in self.examples:
            detail = f" → {outcome.detail}" if outcome.detail else ""
            self.examples[reason] = outcome.url + detail

    @property
    def judged(self) -> int:
        return self.listed + sum(self.left_out.values())

    def note(self, where: str) -> str:
        """One line for the run's summary (the wording of a folder's)."""
        text = f"{where}: {self.fetched:,} requests, {self.listed:,} pages listed"
        left = left_out_text(self.left_out, self.examples)
        if left:
            text += "; left out: " + left
        for extra in (self.moved, self.robots):
            if extra:
                text += f"; {extra}"
        return text


class CrawlFlow:
    """The decisions of one crawl from ``start`` (see the module's docstring).

    ``seen`` and ``frontier`` hold the crawl's state (a runner passes bounded ones; by
    default they are in memory). Outcomes are collected as they are judged; the runner
    takes them with :meth:`take`. Raises ``ValueError`` for a start that is no http(s)
    URL and for budgets out of range.
    """

    def __init__(
        self,
        start: str,
        *,
        extra: Iterable[str] = (),
        scope: ScopeKind = "host",
        max_pages: int = DEFAULT_MAX_PAGES,
        max_depth: int | None = None,
        include_types: Iterable[str] = (),
        agent: str = AGENT,
        seen: Seen | None = None,
        frontier: Frontier | None = None,
    ) -> None:
        if max_pages < 1:
            raise ValueError("max_pages must be at least 1")
        if max_depth is not None and max_depth < 0:
            raise ValueError("max_depth must not be negative")
        if scope not in ("host", "prefix"):
            raise ValueError(f"scope must be 'host' or 'prefix', not {scope!r}")
        self.scope = Scope(start, scope)
        self.start = normalize(iri_to_uri(start))
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.include_types = frozenset(_media(t) for t in include_types)
        self.agent = agent
        self.seen: Seen = seen if seen is not None else _MemorySeen()
        self.frontier: Frontier = frontier if frontier is not None else _MemoryFrontier()
        self.summary = CrawlSummary()
        self.crawl_delay: float | None = None
        self.in_flight = 0
        self._extra: Iterator[str] = iter(extra)
        self._extras_now = False  # the pages links reach are all judged
        self._admitted = 0  # pages found by links admitted to the frontier
        self._robots: Protego | None = None
        self._robots_state: str | None = None  # None until robots.txt is requested
        self._unreadable: str | None = None  # why robots.txt could not be read
        self._outcomes: list[PageOutcome] = []

    # -- what the runner asks ----------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once :meth:`next_requests` found nothing left to request, with nothing in
        flight (it is the call that finds out)."""
        return (
            self._robots_state not in (None, "asked")
            and self.in_flight == 0
            and (self._extras_now and not len(self.frontier) and self._extra is _NO_MORE)
        )

    def reads(self, content_type: str | None) -> bool:
        """Whether the body of a 200 answer of this type is read: HTML only (an included
        type is listed on its headers alone)."""
        return is_html(content_type)

    def next_requests(self, room: int) -> list[PageRequest]:
        """Up to ``room`` requests to send now (none while robots.txt is unanswered)."""
        if self._robots_state is None:
            self._robots_state = "asked"
            self.in_flight += 1
            return [PageRequest(robots_url(self.start), None, robots=True)]
        out: list[PageRequest] = []
        if self._robots_state == "asked":
            return out
        while len(out) < room:
            item = self.frontier.pop()
            if item is None:
                if not self._extras_now and self.in_flight + len(out) == 0:
                    self._extras_now = True
                if not self._extras_now:
                    break
                item = self._next_extra()
                if item is None:
                    break
            out.append(PageRequest(item[0], item[1]))
        self.in_flight += len(out)
        return out

    def on_answer(self, answer: PageAnswer) -> None:
        """Record how a request ended; judge the page and queue what it leads to."""
        self.in_flight -= 1
        req = answer.request
        if req.robots:
            self._on_robots(answer)
            return
        outcome = judge(answer, include_types=self.include_types, agent=self.agent)
        self._judged(outcome)
        target = None
        if outcome.reason == "redirect":
            target = _redirect(answer)
            if target is not None and req.url == self.start and self.scope.why_not(target):
                self._move(target)
                return
        elif outcome.reason == "canonical elsewhere":
            target = outcome.detail
        if target is not None:
            self._found(target, req.depth)
        page = answer.page
        if page is None or outcome.status != 200 or req.depth is None:
            return
        if not ({"nofollow", "none"} & page.directives):
            for link in page.links:
                self._found(link, req.depth + 1)

    def take(self) -> list[PageOutcome]:
        """The outcomes judged since the last call, in the order they were judged."""
        out, self._outcomes = self._outcomes, []
        return out

    # -- decisions -----------------------------------------------------------------------

    def _judged(self, outcome: PageOutcome) -> None:
        self.summary.count(outcome)
        self._outcomes.append(outcome)

    def _on_robots(self, answer: PageAnswer) -> None:
        state = robots_state(answer.status)
        self._robots_state = state
        if state == "parse":
            self._robots = Protego.parse(answer.body.decode("utf-8-sig", "replace"))
            delay = self._robots.crawl_delay(self.agent)
            self.crawl_delay = float(delay) if delay else None
        elif state == "unreachable":
            why = f"HTTP {answer.status}" if answer.status is not None else answer.error
            self._unreadable = f"robots.txt could not be read ({why})"
            self.summary.robots = (
                f"{self._unreadable}: every page is taken as disallowed (RFC 9309 §2.3.1.4)"
            )
        self._found(self.start, 0)

    def _move(self, target: str) -> None:
        """The start page redirects out of scope (``http://`` to ``https://``, to ``www.``):
        the crawl is of the target's site, under its own robots.txt."""
        origin = self.scope.origin
        self.summary.moved = f"{self.start} redirects to {target}: the crawl follows it there"
        self.scope = Scope(target, self.scope.kind)
        self.start = target
        if self.scope.origin != origin:
            self._robots_state = None
            self._robots = None
            self._unreadable = None
            self.crawl_delay = None
        else:
            self._found(target, 0)

    def _disallowed(self, url: str) -> str | None:
        if self._unreadable is not None:
            return self._unreadable
        if self._robots is not None and not self._robots.can_fetch(url, self.agent):
            return f"robots.txt disallows it for {self.agent!r} or '*'"
        return None

    def _why_not(self, url: str, depth: int | None) -> tuple[str, str] | None:
        """Why ``url`` may not be requested (reason, detail), or ``None``: then it is
        counted against the page budget (a page found by a link)."""
        why = self.scope.why_not(url)
        if why is not None:
            return "out of scope", why
        why = self._disallowed(url)
        if why is not None:
            return "disallowed by robots.txt", why
        if depth is not None:
            if self.max_depth is not None and depth > self.max_depth:
                return "budget", f"deeper than max_depth={self.max_depth}"
            if self._admitted >= self.max_pages:
                return "budget", f"beyond the page budget (max_pages={self.max_pages:,})"
            self._admitted += 1
        return None

    def _found(self, url: str, depth: int | None) -> None:
        if not self.seen.add(url):
            return
        why = self._why_not(url, depth)
        if why is None:
            self.frontier.push(url, depth)
        else:
            self._judged(PageOutcome(url, reason=why[0], detail=why[1], depth=depth))

    def _next_extra(self) -> tuple[str, None] | None:
        for raw in self._extra:
            try:
                url = normalize(iri_to_uri(raw))
            except ValueError:
                continue
            if not url.startswith(("http://", "https://")) or not self.seen.add(url):
                continue
            why = self._why_not(url, None)
            if why is None:
                return (url, None)
            self._judged(PageOutcome(url, reason=why[0], detail=why[1]))
        self._extra = _NO_MORE
        return None


_NO_MORE: Final[Iterator[str]] = iter(())
