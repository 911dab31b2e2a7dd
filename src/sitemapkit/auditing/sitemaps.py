"""auditing: the sitemaps of a set, read one by one, each index's children after it.

Where the documents come from (files of a folder, URLs) is the caller's :class:`Source`;
here each is read once, with the positions of its entries
(:func:`~sitemapkit.lint.listing.read_listing`), and handed to the audit. A child that
leads back to a document already read is not read again (the validator reports the
cycle, SM506).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ..errors import SitemapError
from ..lint.audit import AuditReport
from ..lint.listing import Listing, read_listing

__all__ = ["Source", "iter_listings"]


class Source(Protocol):
    """Where the documents of a set are: each named by ``where`` (a file or a URL)."""

    def load(self, where: str) -> tuple[bytes, str | None]:
        """The document's bytes and its URL (``None`` when unknown); raises
        :class:`~sitemapkit.errors.SitemapError` when it cannot be read."""
        ...

    def child(self, url: str) -> str:
        """Where an index's child of URL ``url`` is read from; raises
        :class:`~sitemapkit.errors.SitemapError` saying why when it cannot be."""
        ...


def iter_listings(source: Source, first: list[str], report: AuditReport) -> Iterator[Listing]:
    """The documents ``first`` and what their indexes list, depth first in listing
    order; documents that cannot be read go to ``report.unreadable``, children that
    cannot be reached to ``report.not_checked``."""
    todo = list(reversed(first))
    done: set[str] = set()
    while todo:
        where = todo.pop()
        if where in done:
            continue
        done.add(where)
        try:
            data, url = source.load(where)
        except SitemapError as exc:
            report.unreadable.append((where, exc.message))
            continue
        listing = read_listing(data, where, url=url)
        if listing.error is not None:
            report.unreadable.append((where, listing.error))
            continue
        report.files.append(where)
        kids = []
        for loc in listing.children:
            try:
                kids.append(source.child(loc))
            except SitemapError as exc:
                report.not_checked.append((loc, exc.message))
        todo.extend(reversed(kids))
        yield listing
