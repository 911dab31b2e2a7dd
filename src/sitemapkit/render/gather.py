"""render: the documents of a validated set, read again for the report's counts. An edge.

A URL's body is counted as the validator fetches it: :class:`Recorder` is the validator's
own :class:`~sitemapkit.validation.HttpFetcher` (so the online checks still share its
client) that hands each body to :class:`~.stats.SetStats` before returning it, so no URL
is requested twice. Local files are read again from disk, in chunks, once the validation
is done (:func:`gather`); so is any URL the recorder did not see. One document is in
memory at a time (the validator holds it anyway); the counts are bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from ..core.parse import DEFAULT_MAX_BYTES
from ..errors import FetchError
from ..lint.report import ValidationReport
from ..validation import Fetched, HttpFetcher
from .stats import SetStats, SitemapStats

__all__ = ["Recorder", "gather", "needs_fetcher"]

_CHUNK: Final = 1 << 20


class Recorder(HttpFetcher):
    """An :class:`HttpFetcher` that counts each sitemap it fetches into ``stats``.

    ``validate(fetcher=Recorder(stats))`` then fills ``stats`` with every URL of the set
    as it is validated; the keywords are :class:`HttpFetcher`'s. Close it when done.
    """

    def __init__(self, stats: SetStats, **options: Any) -> None:
        super().__init__(**options)
        self.stats = stats

    def fetch(self, url: str, *, max_bytes: int) -> Fetched:
        got = super().fetch(url, max_bytes=max_bytes)
        if got.status == 200:
            body = memoryview(got.body)
            chunks = (bytes(body[i : i + _CHUNK]) for i in range(0, len(body), _CHUNK))
            self.stats.add(url, chunks, base_url=got.url, max_bytes=max_bytes)
        elif url not in self.stats.sitemaps:
            self.stats.sitemaps[url] = SitemapStats(url, stopped=f"HTTP {got.status}")
        return got


def needs_fetcher(targets: list[str], *, online: bool) -> bool:
    """Whether ``validate()`` would fetch anything for ``targets``: a URL among them, or
    the online checks. Only then is a :class:`Recorder` given to it (with a fetcher,
    ``validate()`` also fetches an index's children that are not beside it)."""
    return online or any(_is_http(t) and not Path(t).exists() for t in targets)


def gather(
    report: ValidationReport,
    stats: SetStats,
    *,
    fetcher: HttpFetcher | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> None:
    """Count every document of ``report`` that ``stats`` has not seen: local files from
    disk, URLs through ``fetcher`` (one is made, and closed, when needed and none is
    given). A document that cannot be read again is left without counts (the report
    says why it could not be validated, if it could not)."""
    own: HttpFetcher | None = None
    try:
        for name in report.files:
            if name in stats.sitemaps:
                continue
            path = Path(name)
            if path.is_file():
                stats.add(name, _file_chunks(path, max_bytes), max_bytes=max_bytes)
            elif _is_http(name):
                if fetcher is None:
                    fetcher = own = HttpFetcher()
                _fetch(fetcher, name, stats, max_bytes)
    finally:
        if own is not None:
            own.close()


def _fetch(fetcher: HttpFetcher, url: str, stats: SetStats, max_bytes: int) -> None:
    try:
        got = fetcher.fetch(url, max_bytes=max_bytes)
    except FetchError as exc:
        stats.sitemaps[url] = SitemapStats(url, stopped=exc.message)
        return
    if got.status == 200:
        stats.add(url, [got.body], base_url=got.url, max_bytes=max_bytes)
    else:
        stats.sitemaps[url] = SitemapStats(url, stopped=f"HTTP {got.status}")


def _file_chunks(path: Path, max_bytes: int) -> Iterator[bytes]:
    """The file's bytes in chunks, a little past ``max_bytes`` at most (the reader stops
    there); nothing when it cannot be read any more."""
    try:
        with path.open("rb") as fh:
            read = 0
            while read <= max_bytes and (chunk := fh.read(_CHUNK)):
                read += len(chunk)
                yield chunk
    except OSError:
        return


def _is_http(text: str) -> bool:
    return text[:8].lower().startswith(("http://", "https://"))
