"""core.parse: the entries of a ``<urlset>`` and a ``<sitemapindex>``. Pure.

:class:`UrlEntries` reads ``<url>`` elements: plain canonical ones on the fast path in the
hot loop, every other one in full (``read_full``), where findings come in a fixed order:
the core values (loc, lastmod, changefreq, priority), then the extensions in document order.
:class:`SitemapEntries` reads the ``<sitemap>`` elements of an index.
"""

from __future__ import annotations

import copy
import re
from typing import Final

from lxml import etree

from ..finding import clip
from ..model import InvalidValue, SitemapRef, Url
from ..namespace import LEGACY_NS, SITEMAP_NS
from ..trusted import trusted_ref, trusted_url
from ..w3cdate import WRITER_FORM, zulu
from .canonical import XML_SPACE, fast_ref, fast_url
from .document import Document
from .extension import Extension, Extensions
from .tree import SPLIT, Entries, Events, foreign, q, split, tag_of
from .value import absolute, date, lexical, loc_rule, value

__all__ = ["SitemapEntries", "UrlEntries"]

#: A core value as read: (stripped text or None for markup, line).
_Values = dict[str, tuple[str | None, int | None, etree._Element]]
_URL_FIELDS = ("loc", "lastmod", "changefreq", "priority")
_SPACE_RUN: Final = re.compile(r"\s+")


def _url_text(doc: Document, loc: etree._Element) -> None:
    """``<loc><url>URL</url></loc>`` (a generator's wrapper, with or without CDATA): the
    text inside is the loc's."""
    if len(loc) != 1 or (loc.text or "").strip(XML_SPACE):
        return
    inner = loc[0]
    if split(inner.tag if isinstance(inner.tag, str) else "")[1] != "url" or len(inner):
        return
    if (inner.tail or "").strip(XML_SPACE):
        return
    doc.judge(
        "SM107",
        "<loc> holds a <url> element around the URL; the URL inside was read",
        loc,
        inner.text,
        lost=False,
    )
    loc.text = inner.text
    loc.remove(inner)


def _first_loc(doc: Document, el: etree._Element, locs: frozenset[str]) -> str | None:
    """The stripped text of an entry's first loc, unchecked (to name the entry), once a
    ``<url>`` wrapper inside it is taken off."""
    for child in el:
        if child.tag in locs:
            if len(child):
                _url_text(doc, child)
            text = child.text
            return text.strip(XML_SPACE) if text else None
    return None


def _trimmed(doc: Document, text: str, line: int | None, at: etree._Element) -> str:
    """A loc as a person reads it: Unicode white space around the URL (NBSP, U+2000-U+200A,
    U+3000: not XML's) is not part of it, nor what follows Unicode white space or a remark
    in brackets after it. ASCII spaces inside a path stay (``summer sale.html``)."""
    url = text.strip()
    m = _SPACE_RUN.search(url)
    if m is not None and (m.group().strip(XML_SPACE) or url[m.end()] in "(["):
        url = url[: m.start()]
    if url == text or not url:
        return text
    doc.findings.add(
        "SM204",
        f"<loc> {clip(text)!r} holds white space or text besides the URL; the URL "
        f"{clip(url)!r} was read. Write the URL alone",
        line=line,
        loc=url,
        at=at,
        lost=False,
    )
    return url


def _reset(doc: Document, el: etree._Element, ns: str) -> None:
    """Report, once, elements that reset the namespace (``xmlns=""``, unprefixed children
    of a prefixed root): read as the sitemap's own."""
    if doc.findings.once("SM101:reset"):
        doc.judge(
            "SM101",
            f"<{tag_of(el)}> is in no namespace inside a document of namespace "
            f'{ns!r} (xmlns="" or no prefix); it was read as the sitemap\'s own. '
            f'Declare xmlns="{SITEMAP_NS}" once on the root',
            el,
            None,
            lost=False,
        )


def _namespace(doc: Document, root: etree._Element, ns: str, local: str) -> None:
    """sitemaps.org: the root "must" declare the 0.9 namespace; report another one."""
    if ns == SITEMAP_NS:
        return
    if ns == LEGACY_NS:
        why = f"the legacy Google namespace {ns!r}"
    elif not ns:
        why = "no namespace"
    else:
        why = f"namespace {ns!r}"
    doc.findings.add(
        "SM101",
        f'<{local}> uses {why}; use xmlns="{SITEMAP_NS}"',
        line=doc.line(root),
        lost=False,  # the entries are read all the same
    )


class UrlEntries(Entries):
    """The ``<url>`` entries of a ``<urlset>``."""

    kind = "urlset"

    def __init__(self, doc: Document, root: etree._Element, ns: str) -> None:
        _namespace(doc, root, ns, "urlset")
        super().__init__(doc, q(ns, "url"), ns, root=root, bare=True)
        self.t_loc, self.t_lastmod, self.t_changefreq, self.t_priority = (
            q(ns, name) for name in _URL_FIELDS
        )
        # children that reset the namespace are read as the sitemap's own (_reset)
        self.core = {name: name for name in _URL_FIELDS} | {q(ns, n): n for n in _URL_FIELDS}
        self.locs = frozenset((self.t_loc, "loc"))
        self.extensions = Extensions(doc, ns)

    def entry(self, el: etree._Element) -> None:
        self.read_full(el)

    def stray(self, el: etree._Element) -> None:
        """A ``<loc>`` straight in the ``<urlset>``, without its ``<url>``: an entry."""
        if el.tag in self.locs:
            try:
                wrap = etree.Element(self.tag)
            except ValueError:  # a namespace lxml refuses although libxml2 read it
                super().stray(el)
                return
            self.doc.count(self.line(el))
            self.add(
                "SM107",
                "<loc> directly under <urlset>, without <url>; it was read as an entry",
                line=self.line(el),
                lost=False,
            )
            wrap.sourceline = el.sourceline  # type: ignore[misc]  # writable in lxml
            wrap.append(copy.copy(el))
            self.read_full(wrap)
        else:
            super().stray(el)

    def read(self, events: Events) -> None:
        """The hot loop, millions of times per document: ``adopt`` and the entry budget
        are inlined (see ``Document.quiet``); an entry that is anything but plain canonical
        loc/lastmod/changefreq/priority goes to ``read_full``."""
        doc = self.doc
        t_loc, t_lastmod = self.t_loc, self.t_lastmod
        t_changefreq, t_priority = self.t_changefreq, self.t_priority
        fast = doc.settings.fast
        append = doc.out.append
        container = self.container
        left = quiet = doc.quiet()
        try:
            for _event, el in events:
                parent = el.getparent()
                if left and parent is container and parent is not None:
                    left -= 1
                    # Invariant: the last placed entry is the container's first child (all
                    # before it were dropped), so a lone previous sibling can only be it.
                    prev = el.getprevious()
                    if prev is not None:
                        if prev.getprevious() is None:
                            del prev
                            del parent[0]
                        else:
                            del prev
                            self.purge(el, parent)
                else:
                    doc.settle(quiet - left)
                    left = quiet = 0
                    doc.count(self.line(el))
                    placed = self.adopt(el, parent)
                    container = self.container
                    left = quiet = doc.quiet()
                    if not placed:
                        continue
                if fast:
                    # Anything unusual (a repeated or empty value, markup inside a value, an
                    # unknown or extension child) breaks out to the full read.
                    loc = lastmod = changefreq = priority = None
                    for child in el:
                        if len(child):
                            break
                        tag = child.tag
                        if tag == t_loc:
                            if loc is not None:
                                break
                            loc = child.text
                            if loc is None:
                                break
                        elif tag == t_lastmod:
                            if lastmod is not None:
                                break
                            lastmod = child.text
                            if lastmod is None:
                                break
                        elif tag == t_changefreq:
                            if changefreq is not None:
                                break
                            changefreq = child.text
                            if changefreq is None:
                                break
                        elif tag == t_priority:
                            if priority is not None:
                                break
                            priority = child.text
                            if priority is None:
                                break
                        else:
                            break
                    else:
                        if loc is not None:
                            url = fast_url(loc, lastmod, changefreq, priority)
                            if url is not None:
                                append(url)
                                continue
                self.read_full(el)
        finally:
            doc.settle(quiet - left)

    def read_full(self, el: etree._Element) -> None:
        """A <url> in full (one per loc when it holds several)."""
        groups = self.split_locs(el, self.locs)
        if groups is not None:
            for group in groups:
                self.read_full(group)
            return
        raw = _first_loc(self.doc, el, self.locs)
        values: _Values = {}
        rest: list[etree._Element] = []
        ns = self.core_ns
        if ns and el.tag != self.tag:
            _reset(self.doc, el, ns)
        for child in el:
            tag = child.tag
            name = self.core.get(tag) if isinstance(tag, str) else None
            if name is not None and name not in values:
                if ns and tag == name:
                    _reset(self.doc, child, ns)
                values[name] = (value(self.doc, child, raw), self.line(child), child)
            else:
                rest.append(child)
        if raw is None and "loc" not in values and el.get(SPLIT) is not None:
            return  # what is left of an entry read in parts
        loc_value = values.get("loc")
        if loc_value is not None and loc_value[0]:
            _, line, at = loc_value
            values["loc"] = (_trimmed(self.doc, loc_value[0], line, at), line, at)
        url = None
        if self.doc.settings.fast:  # canonical core values with extensions: skip the model's checks
            core = [values.get(name) for name in _URL_FIELDS]
            if core[0] is not None and all(item is None or item[0] for item in core):
                loc, lastmod, changefreq, priority = (None if i is None else i[0] for i in core)
                assert loc is not None
                url = fast_url(loc, lastmod, changefreq, priority)
        if url is None:
            url = self._checked(el, values, raw)
            if url is None:
                return
        extensions = self._others(el, rest, raw)
        if extensions:
            url = self.extensions.extend(url, extensions, raw)
        self.doc.out.append(url)

    def _others(
        self, el: etree._Element, rest: list[etree._Element], raw: str | None
    ) -> list[Extension]:
        """The extension elements among the children after the core values, in document
        order; report repeated core values and what is not read."""
        extensions: list[Extension] = []
        for child in rest:
            tag = child.tag
            if not isinstance(tag, str):
                if isinstance(child, etree._Entity):
                    self.doc.judge(
                        "SM011",
                        f"The entity {child.text} inside <url> is never expanded; it was ignored",
                        el,
                        raw,
                    )
                continue
            name = self.core.get(tag)
            if name is not None:
                self.doc.judge(
                    "SM103" if name == "loc" else "SM104",
                    f"<url> has more than one <{name}>; the first one was used",
                    child,
                    raw,
                )
            elif tag != self.tag:  # a nested <url> was reported when it ended
                ext = self.extensions.classify(child, tag, raw)
                if ext is not None:
                    extensions.append(ext)
        return extensions

    def _checked(self, el: etree._Element, values: _Values, raw: str | None) -> Url | None:
        """The Url of the core values, through the model's checks (findings for each)."""
        loc_value = values.get("loc")
        if loc_value is None:
            self.add("SM103", "<url> has no <loc>; entry skipped", line=self.line(el))
            return None
        text, line, at = loc_value
        if text is None:
            return None
        if not text:
            self.add("SM111", "Empty <loc>; entry skipped", line=line)
            return None
        loc = absolute(self.doc, text, line, raw, "loc", at)
        if loc is None:
            return None
        kw, lines, els = self._optional_values(values, raw)
        lastmod = kw.pop("lastmod", None)  # checked, and kept as written: not the model's
        while True:
            try:
                url = Url(loc, **kw)  # type: ignore[arg-type]
                if lastmod is None:
                    return url
                return trusted_url(url.loc, lastmod, url.changefreq, url.priority)  # type: ignore[arg-type]
            except InvalidValue as exc:
                if exc.field == "loc":
                    self.add(
                        loc_rule(loc),
                        f"Invalid <loc>: {exc.detail}. Entry skipped",
                        line=line,
                        loc=raw,
                        at=at,
                    )
                    return None
                rule = {"lastmod": "SM301", "changefreq": "SM401"}.get(exc.field, "SM402")
                self.add(
                    rule,
                    f"Invalid <{exc.field}>: {exc.detail}. The value was ignored",
                    line=lines.get(exc.field),
                    loc=raw,
                    at=els.get(exc.field),
                )
                kw.pop(exc.field)

    def _optional_values(
        self, values: _Values, raw: str | None
    ) -> tuple[dict[str, str], dict[str, int | None], dict[str, etree._Element]]:
        """lastmod, changefreq and priority as the model takes them, with their lines and
        elements."""
        kw: dict[str, str] = {}
        lines: dict[str, int | None] = {}
        els: dict[str, etree._Element] = {}
        for name in ("lastmod", "changefreq", "priority"):
            item = values.get(name)
            if item is None or item[0] is None:
                continue
            text: str | None = item[0]
            lines[name], child = item[1], item[2]
            els[name] = child
            if name == "lastmod" and text:
                if WRITER_FORM.fullmatch(text) is None:  # else date() would only zulu() it
                    text = date(self.doc, text, "lastmod", lines[name], raw, at=child)
                else:
                    text = zulu(text)
            elif name == "priority" and text:
                text = lexical(self.doc, "priority", text, lines[name], raw, at=child)
            elif not text:
                self.add(
                    "SM111",
                    f"Empty <{name}>; the value was ignored",
                    line=lines[name],
                    loc=raw,
                    at=child,
                    lost=False,  # no value: nothing to lose
                )
                text = None
            if text is not None:
                kw[name] = text
        return kw, lines, els


class SitemapEntries(Entries):
    """The ``<sitemap>`` entries of a ``<sitemapindex>``."""

    kind = "sitemapindex"

    def __init__(self, doc: Document, root: etree._Element, ns: str) -> None:
        _namespace(doc, root, ns, "sitemapindex")
        super().__init__(doc, q(ns, "sitemap"), ns, root=root, bare=True)
        self.t_loc, self.t_lastmod = q(ns, "loc"), q(ns, "lastmod")
        self.core = {"loc": "loc", "lastmod": "lastmod"}
        self.core |= {self.t_loc: "loc", self.t_lastmod: "lastmod"}
        self.locs = frozenset((self.t_loc, "loc"))

    def entry(self, el: etree._Element) -> None:
        if self.doc.settings.fast:
            t_loc, t_lastmod = self.t_loc, self.t_lastmod
            loc = lastmod = None
            n = 0
            for n, child in enumerate(el, 1):  # noqa: B007 (n is read after the loop)
                if len(child):
                    break
                tag = child.tag
                if tag == t_loc:
                    loc = child.text
                elif tag == t_lastmod:
                    lastmod = child.text
                else:
                    break
            else:
                if loc is not None and n == 1 + (lastmod is not None):
                    ref = fast_ref(loc, lastmod)
                    if ref is not None:
                        self.doc.out.append(ref)
                        return
        self._read_full(el)

    def _values(self, el: etree._Element, raw: str | None) -> _Values:
        """The loc and lastmod children (the first of each), reporting the others."""
        values: _Values = {}
        for child in el:
            tag = child.tag
            if not isinstance(tag, str):
                continue
            name = self.core.get(tag)
            line = self.line(child)
            if name is not None and self.core_ns and tag == name:
                _reset(self.doc, child, self.core_ns)
            if name is None:
                ns, local = split(tag)
                if ns == self.core_ns or not ns:
                    self.add(
                        "SM501",
                        f"<sitemap> may hold only <loc> and <lastmod>, not "
                        f"<{local}>; it was ignored",
                        line=line,
                        loc=raw,
                        at=child,
                    )
                else:
                    foreign(self.doc, ns, line, raw, index=True)
            elif name in values:
                self.add(
                    "SM501",
                    f"<sitemap> has more than one <{name}>; the first one was used",
                    line=line,
                    loc=raw,
                    at=child,
                )
            else:
                values[name] = (value(self.doc, child, raw), line, child)
        return values

    def _read_full(self, el: etree._Element) -> None:
        groups = self.split_locs(el, self.locs)
        if groups is not None:
            for group in groups:
                self._read_full(group)
            return
        if self.core_ns and el.tag != self.tag:
            _reset(self.doc, el, self.core_ns)
        raw = _first_loc(self.doc, el, self.locs)
        values = self._values(el, raw)
        loc_value = values.get("loc")
        if loc_value is None:
            loc_value = self._bare(el)
            if loc_value is None:
                return
        text, line, at = loc_value
        if text is None:
            return
        if not text:
            self.add("SM111", "Empty <loc>; entry skipped", line=line)
            return
        text = _trimmed(self.doc, text, line, at)
        loc = absolute(self.doc, text, line, raw, "loc", at)
        if loc is None:
            return
        lastmod = None
        item = values.get("lastmod")
        if item is not None and item[0] is not None:
            lastmod = date(self.doc, item[0], "lastmod", item[1], raw, at=item[2])
        try:
            ref = SitemapRef(loc)
        except InvalidValue as exc:
            self.add(
                loc_rule(loc),
                f"Invalid <loc>: {exc.detail}. Entry skipped",
                line=line,
                loc=raw,
                at=at,
            )
            return
        self.doc.out.append(trusted_ref(ref.loc, lastmod))  # kept as written

    def _bare(self, el: etree._Element) -> tuple[str | None, int | None, etree._Element] | None:
        """A ``<sitemap>`` without ``<loc>``: its bare text is the URL, if it holds one."""
        text = (el.text or "").strip(XML_SPACE)
        if el.get(SPLIT) is not None and not text:
            return None  # what is left of an entry read in parts
        if not text or len(el):
            self.add("SM501", "<sitemap> has no <loc>; entry skipped", line=self.line(el))
            return None
        self.add(
            "SM501",
            "<sitemap> holds its URL as bare text, without <loc>; it was read as the "
            "entry's loc. Write <sitemap><loc>URL</loc></sitemap>",
            line=self.line(el),
            loc=text,
            lost=False,
        )
        return text, self.line(el), el
