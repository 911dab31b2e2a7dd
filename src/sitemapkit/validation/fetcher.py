"""validation: the network seen by the validator — one URL's body within a byte budget.

An edge: :class:`Fetcher` is the pluggable protocol (tests pass their own), and
:class:`HttpFetcher` a small synchronous one on httpx. Politeness, retries and caching
belong to the async runner of :mod:`sitemapkit.io.fetch`, not here.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from dataclasses import dataclass
from typing import Protocol

from ..errors import FetchError

__all__ = ["Fetched", "Fetcher", "HttpFetcher"]


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched document: final URL (after redirects), status, body as served (a gzip file
    stays gzip; ``Content-Encoding`` removed) and its ``Last-Modified`` time, if any."""

    url: str
    status: int
    body: bytes
    modified: dt.datetime | None = None


class Fetcher(Protocol):
    """What the validator needs from the network: one URL's body, within a byte budget.

    Implementations raise :class:`~sitemapkit.errors.FetchError` when there is no answer
    at all (DNS, connection, timeout); an HTTP error status is an answer.
    """

    def fetch(self, url: str, *, max_bytes: int) -> Fetched: ...


class HttpFetcher:
    """A small synchronous :class:`Fetcher` on httpx: at most 5 redirects, a timeout, a
    byte budget on the decoded body. (The async runner of :mod:`sitemapkit.io.fetch` is the
    place for politeness, retries and caching; this is enough to validate a handful of URLs.)
    """

    def __init__(self, *, timeout: float = 30.0, user_agent: str | None = None) -> None:
        self.timeout = timeout
        self.user_agent = user_agent or "sitemapkit-validate"

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        import httpx  # when used: httpx costs startup time

        try:
            with (
                httpx.Client(
                    follow_redirects=True,
                    max_redirects=5,
                    timeout=self.timeout,
                    headers={"User-Agent": self.user_agent},
                ) as client,
                client.stream("GET", url) as response,
            ):
                parts: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    parts.append(chunk)
                    size += len(chunk)
                    if size > max_bytes:
                        break
                modified = _last_modified(response.headers.get("last-modified"))
                return Fetched(str(response.url), response.status_code, b"".join(parts), modified)
        except httpx.HTTPError as exc:
            raise FetchError(f"cannot fetch {url!r}: {exc}", where=url) from exc


def _last_modified(header: str | None) -> dt.datetime | None:
    if not header:
        return None
    try:
        return email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
