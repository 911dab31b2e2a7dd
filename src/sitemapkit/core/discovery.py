"""core: the discovery flow, robots.txt → sitemaps → index children. Pure: no I/O, no clock.

:class:`DiscoveryFlow` owns every decision of a crawl and none of its I/O, in the manner of
h11: the runner (``sitemapkit.io.fetch``) asks it for :class:`FetchRequest` objects, fetches
them however it likes (concurrently, with retries, from a cache), streams each sitemap body
through a :class:`~sitemapkit.core.parse.SitemapParser` and reports back:

* :meth:`~DiscoveryFlow.on_redirect` for every redirect hop (the flow refuses non-http(s)
  targets, counts hops, ends loops and redirects to URLs already read);
* :meth:`~DiscoveryFlow.on_records` with the parsed records, while the body is still
  streaming, so that an index's children are queued as soon as they are read;
* :meth:`~DiscoveryFlow.on_response` once per request, with the outcome.

The flow decides what to request: ``/robots.txt`` of a site, then the well-known paths of
:data:`PROBE_PATHS` when robots.txt lists no sitemap, then the children of every index.
It keeps one visited set for the whole crawl (requested URLs, every redirect hop and every
final URL), so no URL is requested twice and index cycles (self, A→B→A, via robots.txt,
via redirects) end. It enforces the budgets: depth, number of sitemaps, total bytes,
redirects. What it learns is collected in :attr:`DiscoveryFlow.tree`, a
:class:`SitemapTree` with one :class:`SitemapStatus` per sitemap.

>>> flow = DiscoveryFlow("https://example.com/")
>>> [(r.url, r.purpose) for r in flow.next_requests()]
[('https://example.com/robots.txt', 'robots')]
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final
from urllib.parse import urljoin, urlsplit

from ..errors import FetchError, InputError, LimitError
from .crawl import (
    FetchRequest,
    FetchResponse,
    ProbeStatus,
    Purpose,
    RobotsStatus,
    SitemapStatus,
    SitemapTree,
    Skipped,
    Unread,
    Via,
)
from .finding import Finding, Severity
from .model import SitemapRef
from .parse import DEFAULT_MAX_BYTES, Record
from .robots import MAX_ROBOTS_BYTES, parse_robots, robots_url

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_DOCUMENT_TIME",
    "DEFAULT_MAX_SITEMAPS",
    "DEFAULT_MAX_TIME",
    "DEFAULT_MAX_TOTAL_BYTES",
    "MAX_REDIRECTS",
    "PROBE_PATHS",
    "DiscoveryFlow",
    "FetchRequest",
    "FetchResponse",
    "FlowLimits",
    "ProbeStatus",
    "Purpose",
    "RobotsStatus",
    "SitemapStatus",
    "SitemapTree",
    "Skipped",
    "Unread",
    "Via",
    "visit_key",
]

#: Where sites put sitemaps without listing them in robots.txt, tried in this order (each
#: relative to the site URL given, usually its root) until one answers with a sitemap:
#: the protocol's example name, Yoast/Rank Math and other CMS index names, the gzipped
#: forms, the text format, WordPress core (5.5+), and two folders seen in the field.
PROBE_PATHS: Final = (
    "sitemap.xml",
    "sitemap_index.xml",
    "sitemap-index.xml",
    "sitemap.xml.gz",
    "sitemap_index.xml.gz",
    "sitemap.txt",
    "wp-sitemap.xml",
    "sitemaps.xml",
    "sitemap/sitemap.xml",
)

#: RFC 9309 §2.3.1.2: crawlers "SHOULD follow at least five consecutive redirects";
#: Google's sitemap fetcher stops after the same number (SM012 "after ≤ 5 redirects").
MAX_REDIRECTS: Final = 5
#: Index → index → … nesting followed below a sitemap given or found directly. Google
#: reads no nested index at all (SM502); five levels is generous for real sites.
DEFAULT_MAX_DEPTH: Final = 5
#: Sitemaps requested in one crawl (robots.txt and probes that find nothing not counted).
DEFAULT_MAX_SITEMAPS: Final = 10_000
#: Decompressed bytes read in one crawl: about twenty million URLs.
DEFAULT_MAX_TOTAL_BYTES: Final = 4 * 1024**3
#: Seconds one document may take, retries included (the runner, which owns the clock,
#: leaves out the time spent waiting for the consumer of the records): a server that
#: trickles its answer resets the timeout between reads at every byte, never this.
#: 50 MiB in 60 s is 7 Mbit/s.
DEFAULT_MAX_DOCUMENT_TIME: Final = 60.0
#: Seconds a whole crawl may take: room for max_sitemaps sitemaps over a real network.
DEFAULT_MAX_TIME: Final = 3600.0

_MAX_SKIPPED: Final = 1_000  # Skipped entries kept; skipped_count counts them all
_MAX_FLOW_FINDINGS: Final = 100  # SM506/SM507 findings kept per index


def visit_key(url: str) -> str:
    """The identity of a URL in the visited set: scheme and host lower case, default port
    and fragment dropped, an empty path as ``/``.

    >>> visit_key("HTTPS://Example.COM:443/a?b#c")
    'https://example.com/a?b'
    """
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url
    if ":" in host:
        host = f"[{host}]"
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{host}{parts.path or '/'}{query}"


def _is_http(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


@dataclass(frozen=True, slots=True)
class FlowLimits:
    """The budgets and settings of one crawl, as given to :class:`DiscoveryFlow` (its
    docstring says what each means); checked when built."""

    follow: bool
    max_depth: int
    max_sitemaps: int
    max_bytes: int
    max_document_bytes: int
    max_redirects: int
    user_agent: str

    def __post_init__(self) -> None:
        if (
            self.max_depth < 0
            or min(self.max_sitemaps, self.max_bytes, self.max_document_bytes) < 1
        ):
            raise ValueError("budgets must be positive (max_depth may be 0)")
        if self.max_redirects < 0:
            raise ValueError("max_redirects must not be negative")


class _Node:
    """A sitemap (or robots.txt, or probe) of the crawl: every key it answers to (the URL
    requested, each redirect hop, the final URL) and the node that listed it."""

    __slots__ = (
        "children",
        "duplicate_of",
        "findings",
        "hops",
        "is_index",
        "keys",
        "listed",
        "parent",
    )

    def __init__(self, key: str, parent: _Node | None) -> None:
        self.keys = {key}
        self.parent = parent
        self.hops = 0
        self.is_index = False
        self.children: set[str] | None = None
        self.listed = 0  # entries listed so far: the next child's position
        self.findings: list[Finding] = []
        self.duplicate_of: str | None = None


class _DocumentOrder:
    """The requests of a crawl, queued and in flight, by their place in document order:
    the queue hands out the smallest order first (depth-first, in listing order), and the
    sorted orders of every request not yet answered say which records must wait."""

    __slots__ = ("_open", "_queue", "_seq")

    def __init__(self) -> None:
        self._queue: list[tuple[tuple[int, ...], int, FetchRequest]] = []
        self._seq = 0
        # the orders of every request queued or in flight, sorted (see blocked())
        self._open: list[tuple[int, ...]] = []

    def __len__(self) -> int:
        """Requests queued (not yet handed out)."""
        return len(self._queue)

    def push(self, req: FetchRequest) -> None:
        """Queue ``req``; it stays open until :meth:`close`."""
        self._seq += 1
        heapq.heappush(self._queue, (req.order, self._seq, req))
        bisect.insort(self._open, req.order)

    def pop(self) -> FetchRequest:
        """The queued request that comes first in document order."""
        return heapq.heappop(self._queue)[2]

    def close(self, order: tuple[int, ...]) -> None:
        """The request at ``order`` is answered (or dropped): it blocks nothing more."""
        del self._open[bisect.bisect_left(self._open, order)]

    def blocked(self, order: tuple[int, ...]) -> bool:
        """See :meth:`DiscoveryFlow.blocked`."""
        for other in self._open:
            if other >= order:
                return False
            if order[: len(other)] != other:
                return True
        return False


class DiscoveryFlow:
    """The decisions of one crawl, driven by a runner; see the module docstring.

    ``target`` is a site (``https://example.com/``: a URL whose path ends with ``/``), a
    robots.txt URL, or a sitemap URL (anything else). Only http(s) URLs are accepted.
    ``follow=False`` reads the sitemaps found directly but not the children of indexes.
    Budgets: ``max_depth`` (index nesting), ``max_sitemaps`` (sitemaps requested),
    ``max_bytes`` (decompressed bytes over the crawl; checked when a request is issued,
    so documents in flight may finish), ``max_document_bytes`` (per document, enforced by
    the parser while streaming), ``max_redirects`` (per request).

    A crawl of a site:

    >>> flow = DiscoveryFlow("https://example.com/")
    >>> (robots,) = flow.next_requests()
    >>> flow.on_response(FetchResponse(robots, robots.url, 200,
    ...                                body=b"Sitemap: https://example.com/index.xml"))
    >>> (index,) = flow.next_requests()
    >>> index.url, index.via
    ('https://example.com/index.xml', 'robots')
    >>> flow.on_records(index, [SitemapRef("https://example.com/a.xml"),
    ...                         SitemapRef("https://example.com/index.xml")])
    >>> [r.url for r in flow.next_requests()]
    ['https://example.com/a.xml']
    >>> flow.on_response(FetchResponse(index, index.url, 200, kind="sitemapindex", entries=2))
    >>> [f.rule for f in flow.tree.sitemaps[0].findings]
    ['SM506']
    """

    def __init__(
        self,
        target: str,
        *,
        follow: bool = True,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_sitemaps: int = DEFAULT_MAX_SITEMAPS,
        max_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_document_bytes: int = DEFAULT_MAX_BYTES,
        max_redirects: int = MAX_REDIRECTS,
        probe_paths: Iterable[str] = PROBE_PATHS,
        user_agent: str = "sitemapkit",
    ) -> None:
        #: The budgets as given, read (never copied) by the flow.
        self.limits = FlowLimits(
            follow,
            max_depth,
            max_sitemaps,
            max_bytes,
            max_document_bytes,
            max_redirects,
            user_agent,
        )
        target = target.strip()
        if not _is_http(target):
            raise InputError(
                f"{target!r} is not an http(s) URL; give a site such as "
                "'https://example.com/' or a sitemap URL",
                hint="local files are read with sitemapkit.read()",
            )
        self.tree = SitemapTree(target)
        self.sitemap_count = 0
        self.bytes_used = 0
        self._order = _DocumentOrder()
        self._outstanding: set[FetchRequest] = set()
        self._nodes: dict[FetchRequest, _Node] = {}
        self._visited: dict[str, _Node] = {}
        self._probes: deque[str] = deque()
        self._robots_sitemaps: tuple[str, ...] = ()
        self._probe_paths = tuple(probe_paths)
        #: A robots.txt target read with ``follow=False``: its sitemaps, listed not read.
        self.listed: tuple[SitemapRef, ...] = ()
        self._list_robots = False
        self._listed_any = False
        self._unread: dict[tuple[str | None, str], Unread] = {}
        self._stopped: str | None = None  # why nothing more is requested (stop())
        path = urlsplit(target).path
        if path.lower().endswith("/robots.txt"):
            self._list_robots = not follow
            self._probe_base = urljoin(target, "/")
            self._claim(FetchRequest(target, "robots"), None)
        elif path.endswith("/") or not path:
            # Probes go below the folder given (usually the root); robots.txt is the origin's.
            self._probe_base = urljoin(target if path else target + "/", ".")
            self._claim(FetchRequest(robots_url(target), "robots"), None)
        else:
            self._probe_base = ""
            self.sitemap_count += 1
            self._claim(FetchRequest(target, "sitemap"), None)

    # -- what to fetch ------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True when nothing is queued or in flight: the crawl is over."""
        return not self._order and not self._outstanding

    @property
    def pending(self) -> int:
        """Requests queued or in flight."""
        return len(self._order) + len(self._outstanding)

    def next_requests(self, limit: int | None = None) -> list[FetchRequest]:
        """The requests ready to be issued now (at most ``limit``), in order.

        Each must be answered by exactly one :meth:`on_response` call; they may be fetched
        concurrently and answered in any order.
        """
        out: list[FetchRequest] = []
        while self._order and (limit is None or len(out) < limit):
            req = self._order.pop()
            node = self._nodes.pop(req)
            remaining = self.limits.max_bytes - self.bytes_used
            if remaining <= 0 and req.purpose != "robots":
                self._skip(
                    req.url,
                    req.parent,
                    f"the crawl's byte budget ({self.limits.max_bytes:,} bytes after "
                    "decompression) is spent; raise max_bytes (--max-bytes) to read more",
                )
                self._order.close(req.order)
                continue
            if req.purpose == "robots":
                req = replace(req, max_bytes=MAX_ROBOTS_BYTES)
            else:
                req = replace(req, max_bytes=min(self.limits.max_document_bytes, remaining))
            self._nodes[req] = node
            self._outstanding.add(req)
            out.append(req)
        return out

    def nothing_found(self) -> Finding | None:
        """Once the crawl is over: the finding that says nothing was found and what was
        tried (:meth:`SitemapTree.nothing_found`), or ``None`` when a sitemap was read or
        a robots.txt target listed some."""
        if not self.done or self._listed_any:
            return None
        return self.tree.nothing_found()

    def stop(self, reason: str) -> None:
        """Request nothing more: every request queued now, and every sitemap listed from
        now on, is not read for ``reason`` (the runner's deadline has passed, say). The
        requests in flight still need their :meth:`on_response`."""
        self._stopped = reason
        self._probes.clear()
        while self._order:
            req = self._order.pop()
            self._nodes.pop(req)
            self._order.close(req.order)
            if req.purpose == "sitemap":
                self._skip(req.url, req.parent, reason)

    def drop(self, request: FetchRequest, reason: str) -> None:
        """Instead of :meth:`on_response`: a request handed out and never sent (the crawl
        stopped before its turn) is not read, for ``reason``."""
        self._outstanding.remove(request)
        self._order.close(request.order)
        self._nodes.pop(request)
        if request.purpose == "sitemap":
            self._skip(request.url, request.parent, reason)

    # -- what the runner reports --------------------------------------------------------

    def on_redirect(self, request: FetchRequest, url: str, location: str) -> str | None:
        """A redirect from ``url`` (the request's URL or an earlier hop) to ``location``.

        Returns the absolute URL to request next, or ``None`` when it was already read
        in this crawl: stop there and report the response. Raises
        :class:`~sitemapkit.errors.FetchError` for a redirect loop or a non-http(s)
        target, :class:`~sitemapkit.errors.LimitError` after ``max_redirects`` hops.
        """
        node = self._nodes[request]
        target = urljoin(url, location.strip()).partition("#")[0]
        if not _is_http(target):
            raise FetchError(
                f"Redirect to {target!r} refused: only http(s) URLs are fetched",
                where=request.url,
            )
        node.hops += 1
        if node.hops > self.limits.max_redirects:
            raise LimitError(
                f"More than {self.limits.max_redirects} redirects (the last to {target!r})",
                where=request.url,
                hint="link the final URL directly",
            )
        key = visit_key(target)
        if key in node.keys:
            raise FetchError(
                f"Redirect loop: {url!r} redirects back to {target!r}", where=request.url
            )
        seen = self._visited.get(key)
        if seen is not None:
            node.duplicate_of = target
            return None
        node.keys.add(key)
        self._visited[key] = node
        return target

    def on_records(self, request: FetchRequest, records: Iterable[Record]) -> None:
        """Records parsed from the body of ``request`` (call as they stream): queues the
        children of an index, reporting self-references and cycles (SM506) and duplicates
        (SM507)."""
        node = self._nodes[request]
        for record in records:
            if type(record) is SitemapRef:
                node.is_index = True
                if self.limits.follow:
                    self._child(request, node, record.loc)

    def on_response(self, response: FetchResponse) -> None:
        """The outcome of a request: call exactly once per request, after its records."""
        req = response.request
        self._outstanding.remove(req)
        self._order.close(req.order)
        node = self._nodes.pop(req)
        node.children = None
        self.bytes_used += response.size
        if req.purpose == "robots":
            self._on_robots(response, node)
        elif req.purpose == "probe":
            self._on_probe(response, node)
        else:
            self.tree.sitemaps.append(_status(response, node, self.limits))

    # -- internals ----------------------------------------------------------------------

    def blocked(self, order: tuple[int, ...]) -> bool:
        """True while the records of the request at ``order`` must wait: a request that
        comes before it in document order (not one of the indexes above it) is queued or
        in flight. Records come in document order, children in the order their index
        lists them, however the fetches overlap; a request that comes before can only be
        queued by one that is open already, so no later one can block ``order``."""
        return self._order.blocked(order)

    def _claim(self, req: FetchRequest, parent: _Node | None) -> None:
        key = visit_key(req.url)
        node = _Node(key, parent)
        self._visited[key] = node
        self._nodes[req] = node
        self._order.push(req)

    def _skip(self, url: str, parent: str | None, reason: str) -> None:
        tree = self.tree
        tree.skipped_count += 1
        if len(tree.skipped) < _MAX_SKIPPED:
            tree.skipped.append(Skipped(url, parent, reason))
        group = self._unread.get((parent, reason))
        if group is None:
            group = self._unread[(parent, reason)] = Unread(parent, reason, url, 0)
            tree.unread.append(group)
        group.count += 1

    def _flow_finding(self, node: _Node, rule: str, message: str, where: str, loc: str) -> None:
        if len(node.findings) < _MAX_FLOW_FINDINGS:
            severity: Severity = "warning" if rule == "SM507" else "error"
            node.findings.append(Finding(rule, severity, message, where, loc=loc))

    def _enqueue(
        self,
        url: str,
        parent: FetchRequest | None,
        node: _Node | None,
        via: Via,
        position: int = 0,
    ) -> None:
        """Queue a sitemap found by robots.txt, a probe or an index, within the budgets;
        ``position`` is its place in the parent's listing."""
        parent_url = parent.url if parent is not None else None
        depth = parent.depth + 1 if parent is not None and via == "index" else 0
        if not _is_http(url):
            self._skip(url, parent_url, "not an http(s) URL; only http(s) URLs are fetched")
            return
        if visit_key(url) in self._visited:
            return  # read or queued already: the visited set keeps every URL to one fetch
        if self._stopped is not None:
            self._skip(url, parent_url, self._stopped)
            return
        limits = self.limits
        if depth > limits.max_depth:
            self._skip(
                url,
                parent_url,
                f"nested deeper than max_depth={limits.max_depth}; raise max_depth "
                "(--max-depth) to follow it",
            )
            return
        if self.sitemap_count >= limits.max_sitemaps:
            self._skip(
                url,
                parent_url,
                f"the crawl's sitemap budget (max_sitemaps={limits.max_sitemaps:,}) is spent; "
                "raise max_sitemaps (--max-sitemaps) to read more",
            )
            return
        self.sitemap_count += 1
        order = (*parent.order, position) if parent is not None else (position,)
        self._claim(FetchRequest(url, "sitemap", parent_url, depth, via, order=order), node)

    def _child(self, request: FetchRequest, node: _Node, loc: str) -> None:
        key = visit_key(loc)
        node.listed += 1
        if node.children is None:
            node.children = set()
        if key in node.children:
            self._flow_finding(
                node,
                "SM507",
                f"The index lists {loc!r} more than once; it was read once",
                request.url,
                loc,
            )
            return
        node.children.add(key)
        up: _Node | None = node
        while up is not None:
            if key in up.keys:
                what = "itself" if up is node else f"{loc!r}, which leads to this index"
                self._flow_finding(
                    node,
                    "SM506",
                    f"The index lists {what}: a cycle. It was not followed again",
                    request.url,
                    loc,
                )
                return
            up = up.parent
        self._enqueue(loc, request, node, "index", node.listed)

    def _on_robots(self, response: FetchResponse, node: _Node) -> None:
        req = response.request
        status = response.status
        sitemaps: tuple[str, ...] = ()
        findings: tuple[Finding, ...] = ()
        error = response.error
        if error is None and status is not None and 200 <= status < 300:
            parsed = parse_robots(
                response.body,
                response.final_url,
                user_agent=self.limits.user_agent,
                truncated=response.truncated,
            )
            sitemaps, findings = parsed.sitemaps, parsed.findings
        elif error is None and status is not None and status >= 500:
            # RFC 9309 §2.3.1.4: "unreachable"; crawlers assume a complete disallow.
            error = FetchError(f"robots.txt answered HTTP {status}", where=req.url)
        self.tree.robots = RobotsStatus(
            req.url, response.final_url, status, sitemaps, findings, response.elapsed, error
        )
        if self._list_robots:
            # The target is this robots.txt: its sitemaps are its entries (not followed).
            self.listed = tuple(SitemapRef(url) for url in sitemaps)
            self._listed_any = bool(sitemaps)
            return
        for position, url in enumerate(sitemaps):
            self._enqueue(url, req, node, "robots", position)
        answered = status is not None and not (200 <= status < 300 and error is not None)
        if not sitemaps and (answered or error is None):
            # RFC 9309 §2.3.1.3: 4xx means "unavailable": no rules, and no Sitemap: lines.
            # A host that gave no answer at all, or stopped answering (a deadline cut its
            # robots.txt), is not probed: every probe would wait for the same silence.
            self._probes.extend(urljoin(self._probe_base, p) for p in self._probe_paths)
            self._next_probe()

    def _next_probe(self) -> None:
        while self._probes:
            url = self._probes.popleft()
            if visit_key(url) not in self._visited:
                self._claim(FetchRequest(url, "probe"), None)
                return

    def _on_probe(self, response: FetchResponse, node: _Node) -> None:
        ok = response.status == 200 or response.from_cache
        if ok and response.kind is not None and node.duplicate_of is None:
            self.sitemap_count += 1
            self._probes.clear()
            self.tree.sitemaps.append(_status(response, node, self.limits, via="probe"))
            return
        self.tree.probes.append(
            ProbeStatus(response.request.url, response.final_url, response.status, response.error)
        )
        self._next_probe()


def _status(
    response: FetchResponse, node: _Node, limits: FlowLimits, via: Via | None = None
) -> SitemapStatus:
    """The status of a sitemap read (or not), with the crawl's findings about it."""
    req = response.request
    findings = list(response.findings)
    error = response.error
    status = response.status
    ok = status == 200 or (status == 304 and response.from_cache)
    # a fetch that failed after a 200 (the body stalled, a deadline cut it, the
    # connection dropped) is said too; a parser's error has its own finding
    cut = ok and isinstance(error, FetchError)
    if node.duplicate_of is None and (not ok or cut):
        if error is None:
            error = FetchError(f"HTTP status {status}", where=req.url)
        what = "was not read to the end" if cut else "could not be fetched"
        # SM012: "Fetch status of the sitemap URL is not 200 (after ≤ 5 redirects)".
        findings.append(
            Finding("SM012", "warning", f"The sitemap {what}: {error.message}", req.url)
        )
    elif isinstance(error, LimitError) and node.duplicate_of is None:
        findings.append(_cut_by_size(req, error, limits))
    if response.kind == "sitemapindex" and node.parent is not None and node.parent.is_index:
        # sitemaps.org: an index lists sitemaps; Google reads no nested index. It was
        # read all the same: for a reader, a warning (issue #11: kept, reported).
        findings.append(
            Finding(
                "SM502",
                "warning",
                f"This index is listed by the index {req.parent!r}; nested indexes are "
                "not read by Google. List its sitemaps in the top index",
                req.url,
            )
        )
    findings.extend(node.findings)
    return SitemapStatus(
        url=req.url,
        parent=req.parent,
        status=status,
        bytes=response.size,
        entries=response.entries,
        findings=tuple(findings),
        elapsed=response.elapsed,
        error=error,
        final_url=response.final_url,
        kind=response.kind,
        depth=req.depth,
        via=via or req.via,
        transferred=response.transferred,
        from_cache=response.from_cache,
        duplicate_of=node.duplicate_of,
    )


def _cut_by_size(req: FetchRequest, error: LimitError, limits: FlowLimits) -> Finding:
    """SM006 for a document the size budget cut: it says which budget."""
    if req.max_bytes < limits.max_document_bytes:
        budget = (
            f"the crawl's byte budget (max_bytes={limits.max_bytes:,}, --max-bytes) left "
            f"{req.max_bytes:,} bytes for it"
        )
    else:
        budget = f"the limit per document is {limits.max_document_bytes:,} bytes"
    return Finding(
        "SM006",
        "error",
        f"The sitemap was not read to the end: {error.message} ({budget})",
        req.url,
    )
