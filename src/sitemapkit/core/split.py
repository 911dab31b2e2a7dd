"""core: where a sitemap file must end. Pure: the one rule every writer path cuts by.

sitemaps.org: a file holds "no more than 50,000 URLs and must be no larger than 50MB
(52,428,800 bytes)" uncompressed; Google News: "up to 1,000 news:news tags" per
sitemap. The writer lowers these (``max_urls``, ``max_bytes``, ``max_news``); the
byte size counts the real header (with the namespaces the file declares) and the
closing tag, so a file cut by :func:`fits` is within the limit exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import limits as _limits

__all__ = ["Limits", "fits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The most one sitemap file may hold: entries, uncompressed bytes, news entries."""

    urls: int = _limits.MAX_URLS
    bytes: int = _limits.MAX_BYTES
    news: int = _limits.MAX_NEWS


def fits(limits: Limits, *, count: int, size: int, news: int, head: int, tail: int) -> bool:
    """Whether a file of ``count`` entries is within ``limits``.

    ``size`` is the entries' bytes, ``news`` how many carry news, ``head`` and ``tail``
    the bytes of the file's start (declaration and root start tag) and end.
    """
    return count <= limits.urls and head + size + tail <= limits.bytes and news <= limits.news
