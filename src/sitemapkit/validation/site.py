"""validation: robots.txt and sites — what a URL target leads to, and a robots.txt's checks.

An edge (it fetches through the validation's :class:`~.fetcher.Fetcher`). A URL target is
handed to the one discovery flow (:class:`~sitemapkit.core.discovery.DiscoveryFlow`), as
``read`` hands it: a site's ``/robots.txt``, its ``Sitemap:`` lines, else the known paths
(``PROBE_PATHS``); a robots.txt URL; or a sitemap URL. The flow decides what to request;
here its robots.txt and probes are fetched, and the sitemaps it finds are handed back to
the validator, which fetches and validates each as a document of the set.

A robots.txt, fetched or local, is read by the one robots.txt parser
(:func:`~sitemapkit.core.robots.parse_robots`): the findings about its ``Sitemap:`` lines
(rules RB003-RB011 of ``spec/DISCOVERY.md``) get the line and column of the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Final

from ..core.discovery import DiscoveryFlow, FetchRequest, FetchResponse
from ..core.finding import Finding
from ..core.parse import Kind, SitemapParser
from ..core.robots import MAX_ROBOTS_BYTES, REPORTED, parse_robots
from ..errors import FetchError, SitemapError
from ..io.target import no_sitemap_line
from .fetcher import Fetched, Fetcher

__all__ = ["ROBOTS_RULES", "Discovered", "check_robots", "discover", "with_columns"]

#: The rules of ``spec/DISCOVERY.md`` the robots.txt parser reports about ``Sitemap:``
#: lines (the catalogue's ``robots`` rules).
ROBOTS_RULES: Final = REPORTED

_EOL: Final = re.compile(rb"\r\n|\r|\n")


@dataclass(slots=True)
class Discovered:
    """What a URL target led to: its robots.txt (final URL and answer, when one was read
    with a 2xx status), the sitemaps found (URL, and the answer when a probe fetched it
    already), and the finding that says what was tried when nothing was found."""

    robots: tuple[str, Fetched] | None = None
    robots_findings: tuple[Finding, ...] = ()
    sitemaps: list[tuple[str, Fetched | None]] = field(default_factory=list)
    nothing: Finding | None = None


def discover(url: str, fetcher: Fetcher, *, follow: bool, max_bytes: int, agent: str) -> Discovered:
    """Run the discovery flow for the URL target ``url``, fetching its robots.txt and its
    probes with ``fetcher``. ``follow=False`` on a robots.txt target lists its sitemaps
    without validating them (as ``read --no-follow`` does). Raises
    :class:`~sitemapkit.errors.InputError` for a URL that is not http(s)."""
    flow = DiscoveryFlow(url, follow=follow, max_document_bytes=max_bytes, user_agent=agent)
    found = Discovered()
    while not flow.done:
        for req in flow.next_requests():
            if req.purpose == "sitemap":
                # the validator fetches and validates it; the flow only needs an answer
                found.sitemaps.append((req.url, None))
                flow.on_response(FetchResponse(req, req.url, 200))
                continue
            response, got = _fetch(fetcher, req)
            if req.purpose == "robots" and got is not None and 200 <= got.status < 300:
                found.robots = (got.url, got)
            elif req.purpose == "probe" and response.kind is not None and got is not None:
                found.sitemaps.append((req.url, got))
            flow.on_response(response)
    robots = flow.tree.robots
    if robots is not None and found.robots is not None:
        found.robots_findings = tuple(with_columns(robots.findings, found.robots[1].body))
    found.nothing = flow.nothing_found()
    return found


def _fetch(fetcher: Fetcher, req: FetchRequest) -> tuple[FetchResponse, Fetched | None]:
    """A robots.txt or a probe fetched, as the flow's response (the probe's kind sniffed
    from its start: an HTML page at a known path is not a sitemap)."""
    try:
        got = fetcher.fetch(req.url, max_bytes=req.max_bytes)
    except FetchError as exc:
        return FetchResponse(req, req.url, error=exc), None
    body = got.body
    if req.purpose == "robots":
        truncated = len(body) > req.max_bytes
        body = body[: req.max_bytes]
        return FetchResponse(req, got.url, got.status, body=body, truncated=truncated), got
    kind = _kind(body) if got.status == 200 else None
    return FetchResponse(req, got.url, got.status, kind=kind, size=len(body)), got


def _kind(body: bytes) -> Kind | None:
    parser = SitemapParser(summarize=False)
    try:
        parser.feed(body[: 1 << 16])
    except SitemapError:
        return None  # HTML, an unknown root: not a sitemap
    return parser.kind


def check_robots(
    data: bytes, where: str, url: str | None, *, agent: str
) -> tuple[tuple[str, ...], list[Finding]]:
    """The sitemaps a local robots.txt lists and the findings about its ``Sitemap:``
    lines, placed on their line and column. ``url`` (the file's published URL, if known)
    resolves relative values; without it they are errors (RB003)."""
    truncated = len(data) > MAX_ROBOTS_BYTES
    parsed = parse_robots(
        data[:MAX_ROBOTS_BYTES], url, user_agent=agent, truncated=truncated, where=where
    )
    findings = with_columns(parsed.findings, data)
    if not parsed.sitemaps:
        findings.append(
            Finding("SM012", "warning", f"No sitemap found: {no_sitemap_line(data)}", where)
        )
    return parsed.sitemaps, findings


def with_columns(findings: tuple[Finding, ...] | list[Finding], data: bytes) -> list[Finding]:
    """The findings of a robots.txt, each on its line with the column of the value it is
    about (the record's first character when it names no value)."""
    last = max((f.line for f in findings if f.line is not None), default=0)
    lines = _EOL.split(data.removeprefix(b"\xef\xbb\xbf"), last) if last else []
    out: list[Finding] = []
    for f in findings:
        if f.line is None or f.column is not None or f.line > len(lines):
            out.append(f)
            continue
        text = lines[f.line - 1].decode("utf-8", "replace")
        at = text.find(f.loc) if f.loc else -1
        if at < 0:
            at = len(text) - len(text.lstrip())
        out.append(replace(f, column=at + 1))
    return out
