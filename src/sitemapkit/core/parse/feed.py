"""core.parse: RSS 2.0 and Atom feeds, read as sitemaps. Pure.

Google reads feeds as sitemaps: the item's link is the URL, its date the lastmod. Nothing
else of a feed is checked (other children of the channel are a feed's business, so strays
are not reported).
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod

from lxml import etree

from ..finding import clip
from ..model import InvalidValue, Url
from ..namespace import RDF_NS, RSS1_NS
from .document import Document
from .tree import Entries, q
from .value import absolute, date, loc_rule, value

__all__ = ["AtomEntries", "RssItems"]


class _FeedEntries(Entries, ABC):
    """An item's link is the URL, its date the lastmod; each feed format finds them."""

    strays = False

    @abstractmethod
    def _parts(self, el: etree._Element) -> tuple[str | None, int | None, str | None, int | None]:
        """(link, its line, date text, its line) of an item."""

    @abstractmethod
    def _no_link(self, el: etree._Element, link: str | None) -> None:
        """Report an item without a link (``link`` is ``""`` for an empty one)."""

    @abstractmethod
    def _lastmod(self, text: str, line: int | None, link: str) -> str | dt.datetime | None:
        """The lastmod of a date text, or None (reported)."""

    def entry(self, el: etree._Element) -> None:
        link, link_line, text, date_line = self._parts(el)
        if not link:
            self._no_link(el, link)
            return
        loc = absolute(self.doc, link, link_line, link, "link")
        if loc is None:
            return
        lastmod = self._lastmod(text, date_line, link) if text else None
        try:
            self.doc.out.append(Url(loc, lastmod=lastmod))
        except InvalidValue as exc:
            self.add(
                loc_rule(loc), f"Invalid link: {exc.detail}. Entry skipped", line=link_line, loc=loc
            )


class RssItems(_FeedEntries):
    """RSS 2.0 ``<item>``: ``<link>`` is the URL, ``<pubDate>`` (RFC 822) the lastmod.
    RSS 1.0 (an ``<rdf:RDF>`` root): its items sit beside the channel, in the RSS 1.0
    namespace; the ``<link>``, else the ``rdf:about``, is the URL."""

    kind = "rss"

    def __init__(self, doc: Document, root: etree._Element, ns: str) -> None:
        self._rdf = ns == RDF_NS
        ns = RSS1_NS if self._rdf else ""
        super().__init__(doc, q(ns, "item"), root=root)
        self._t_link, self._t_date = q(ns, "link"), q(ns, "pubDate")

    def container_of(self, root: etree._Element) -> etree._Element | None:
        return root if self._rdf else root.find("channel")

    def is_container(self, parent: etree._Element) -> bool:
        if self._rdf:
            return parent.getparent() is None
        up = parent.getparent()
        return parent.tag == "channel" and up is not None and up.getparent() is None

    def _parts(self, el: etree._Element) -> tuple[str | None, int | None, str | None, int | None]:
        link = text = None
        link_line = date_line = None
        for child in el:
            if child.tag == self._t_link and link is None:
                link, link_line = value(self.doc, child, None), self.line(child)
            elif child.tag == self._t_date and text is None:
                text, date_line = value(self.doc, child, None), self.line(child)
        if not link and self._rdf:
            about = (el.get(f"{{{RDF_NS}}}about") or "").strip()
            if about:
                link, link_line = about, self.line(el)
        return link, link_line, text, date_line

    def _no_link(self, el: etree._Element, link: str | None) -> None:
        self.add(
            "SM103" if link is None else "SM111",
            "RSS <item> has no <link>; entry skipped",
            line=self.line(el),
        )

    def _lastmod(self, text: str, line: int | None, link: str) -> dt.datetime | None:
        import email.utils  # only RSS needs it; it costs ~20 ms to import

        try:
            lastmod = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            self.add(
                "SM301",
                f"Invalid <pubDate> {clip(text)!r}: not an RFC 822 date "
                "such as 'Wed, 01 May 2024 10:00:00 +0000'. The value was ignored",
                line=line,
                loc=link,
            )
            return None
        if lastmod.tzinfo is None:  # "-0000": UTC, local zone unknown (RFC 2822)
            lastmod = lastmod.replace(tzinfo=dt.UTC)
        return lastmod


class AtomEntries(_FeedEntries):
    """Atom ``<entry>``: ``<link rel="alternate">`` is the URL, ``<updated>`` (1.0) or
    ``<modified>`` (0.3) the lastmod."""

    kind = "atom"

    def __init__(self, doc: Document, root: etree._Element, ns: str) -> None:
        super().__init__(doc, q(ns, "entry"), ns, root=root)
        self._t_link = q(ns, "link")
        self._t_dates = (q(ns, "updated"), q(ns, "modified"))

    def _parts(self, el: etree._Element) -> tuple[str | None, int | None, str | None, int | None]:
        href = text = None
        link_line = date_line = None
        for child in el:
            tag = child.tag
            if tag == self._t_link and href is None:
                rel = child.get("rel")
                if rel is None or rel.strip() == "alternate":
                    attr = child.get("href")
                    href, link_line = (attr.strip() if attr else ""), self.line(child)
            elif tag in self._t_dates and text is None:
                text, date_line = value(self.doc, child, None), self.line(child)
        return href, link_line, text, date_line

    def _no_link(self, el: etree._Element, link: str | None) -> None:
        self.add(
            "SM103",
            'Atom <entry> has no <link rel="alternate" href=…>; entry skipped',
            line=self.line(el),
        )

    def _lastmod(self, text: str, line: int | None, link: str) -> str | None:
        # RFC 3339 allows lowercase t and z; W3C Datetime does not.
        return date(self.doc, text.upper(), "updated", line, link, keep=False)  # for the model
