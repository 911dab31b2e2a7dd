"""core: what a source of pages concluded about one page of a site. Pure: plain values.

A built site folder (:mod:`sitemapkit.io.sources.folder`) and a crawl of a running site
both judge pages one by one: a page is *listed* (it answers with HTML and may be indexed)
or *left out* for one of :data:`REASONS`. A :class:`PageOutcome` holds that judgement and
the facts behind it, so the writer turns listed pages into entries (:func:`listed_url`)
and an audit holds the same outcomes against a site's sitemaps, whichever source gave
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .model import Alternate, Image, InvalidValue, Url

__all__ = ["REASONS", "Conversion", "PageOutcome", "left_out_text", "listed_url"]

#: Why a page is left out, in the order a summary names them. A folder uses the first
#: seven; a crawl the first two and the rest.
REASONS: Final = (
    "noindex",
    "canonical elsewhere",
    "error page",
    "disallowed by robots.txt",
    "hidden",
    "excluded by --exclude",
    "this run's output",
    "redirect",
    "error status",
    "not HTML",
    "out of scope",
    "budget",
    "fetch failed",
)


@dataclass(frozen=True, slots=True)
class PageOutcome:
    """One page of a site as a source judged it.

    ``url`` is the page's URL (for a crawl in :func:`~.urls.normalize`'s comparison form);
    ``loc`` the URL a sitemap lists for it, ``None`` when it is left out (``reason``, one of
    :data:`REASONS`, with ``detail``: the tag that says noindex, the canonical or redirect
    target, the status). ``status`` is the HTTP status (``None`` for a folder's files and
    for pages never requested); ``images``, ``alternates`` (``(hreflang, URL)``),
    ``modified`` (the page's own W3C date), ``last_modified`` (the ``Last-Modified``
    header, as a W3C date) and ``links`` (the pages it links to, comparison form) are its
    facts; ``depth`` is how many links from the start it was found (``None``: not by a
    link, such as a URL only a sitemap names).

    >>> o = PageOutcome("https://example.com/a", loc="https://example.com/a", status=200)
    >>> o.listed, PageOutcome("https://example.com/b", reason="noindex").listed
    (True, False)
    """

    url: str
    loc: str | None = None
    reason: str | None = None
    detail: str | None = None
    status: int | None = None
    images: tuple[str, ...] = ()
    alternates: tuple[tuple[str, str], ...] = ()
    modified: str | None = None
    last_modified: str | None = None
    links: tuple[str, ...] = ()
    depth: int | None = None

    @property
    def listed(self) -> bool:
        return self.reason is None and self.loc is not None


def left_out_text(counts: Mapping[str, int], examples: Mapping[str, str]) -> str:
    """The pages left out, by reason in the order of :data:`REASONS`, with an example each
    (a folder's summary and a crawl's say it alike).

    >>> left_out_text({"noindex": 2, "error page": 2}, {"noindex": "a", "error page": "404.html"})
    '2 noindex (e.g. a), 2 error pages (e.g. 404.html)'
    """
    return ", ".join(
        f"{counts[r]:,} {r}{'s' if r == 'error page' and counts[r] > 1 else ''}"
        f" (e.g. {examples[r]})"
        for r in REASONS
        if counts.get(r)
    )


@dataclass(slots=True)
class Conversion:
    """What :func:`listed_url` skipped because a sitemap cannot carry it, counted."""

    bad_images: int = 0
    bad_hreflang: int = 0

    def texts(self) -> list[str]:
        """What was skipped, for a run's summary (nothing when nothing was)."""
        out = []
        if self.bad_hreflang:
            out.append(f"{self.bad_hreflang:,} hreflang values that are not language codes skipped")
        if self.bad_images:
            out.append(f"{self.bad_images:,} image URLs that a sitemap cannot carry skipped")
        return out


def listed_url(outcome: PageOutcome, lastmod: str | None, skipped: Conversion) -> Url:
    """The sitemap entry of a listed page, with ``lastmod``; image URLs and hreflang
    values a sitemap cannot carry are skipped and counted in ``skipped``.

    >>> c = Conversion()
    >>> o = PageOutcome("https://example.com/", loc="https://example.com/",
    ...                 images=("https://cdn.example.com/a.png", "https://exa mple/"),
    ...                 alternates=(("de", "https://example.com/de/"),))
    >>> u = listed_url(o, "2024-05-01", c)
    >>> len(u.images), u.alternates[0].hreflang, c.bad_images
    (1, 'de', 1)
    """
    if outcome.loc is None:
        raise ValueError(f"{outcome.url} is not listed ({outcome.reason})")
    images = []
    for src in outcome.images:
        try:
            images.append(Image(src))
        except InvalidValue:
            skipped.bad_images += 1
    alternates = []
    for lang, href in outcome.alternates:
        try:
            alternates.append(Alternate(lang, href))
        except InvalidValue:
            skipped.bad_hreflang += 1
    return Url(outcome.loc, lastmod=lastmod, images=tuple(images), alternates=tuple(alternates))
