"""lint: the coverage audit — a site's pages held against what its sitemaps list. Pure.

Decides AUD001-AUD004 and, for a crawl or a build folder, SM217 (the online checks
decide it too, from their own answers). The pages come as
:class:`~sitemapkit.core.outcome.PageOutcome`, whichever source judged them (a crawl,
a build folder); the sitemaps as :class:`~.listing.Listed` entries, each with its
file, line and column. :class:`Audit` takes the sitemaps first (a crawl is told the
listed URLs to request, :meth:`Audit.listed`), then the pages one by one:

* ``AUD004`` when an entry's URL (after normalisation, :func:`~sitemapkit.core.urls.normalize`)
  was listed by an earlier sitemap of the set: at the entry, as it is added;
* ``SM217`` when the page of a listed URL may not be indexed (:data:`NOT_INDEXABLE`
  gives the reasons, worded in the message), and ``AUD003`` when its lastmod drifts from
  the page's own date (else its ``Last-Modified``): over :data:`LATER` later, or over
  :data:`EARLIER` earlier; both at each entry that lists it, as the page arrives;
* ``AUD001`` when an indexable page that was found (reached by links in a crawl; any
  page of a folder) is listed nowhere: at the page, as it arrives;
* ``AUD002`` at :meth:`Audit.finish`: a listed, indexable page that no link reaches.
  In a crawl a page is reached when the crawl found it by links (``depth`` is set) or
  a page it found by links links to it; in a folder (``links_reach``), when another
  page of the folder links to it. The start page is reached.

Memory stays near 60 bytes a listed URL plus its text (115 bytes measured for 1,000,000
URLs of 52 characters with their lastmod): the entries live in flat arrays (hash,
sitemap, line, column, lastmod, flags, an arena of their text), with no object per URL;
which sitemap first listed a URL is :class:`~.checks.hashindex.HashIndex`'s. Pages are
not held at all.
"""

from __future__ import annotations

import datetime as dt
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from ..core.finding import Finding, clip
from ..core.outcome import PageOutcome
from ..core.rules import severity
from ..core.urls import normalize
from ..core.w3cdate import instant
from .checks.hashindex import HashIndex
from .listing import Listed
from .report import ValidationReport, sort_findings

__all__ = ["DECIDED", "EARLIER", "LATER", "NOT_INDEXABLE", "Audit", "AuditReport", "Coverage"]

#: The rules the audit decides.
DECIDED: Final = frozenset({"AUD001", "AUD002", "AUD003", "AUD004", "SM217"})
#: RULES.md AUD003: "more than one day later than the page's own modification date …
#: or more than 30 days earlier than it".
LATER: Final = dt.timedelta(days=1)
EARLIER: Final = dt.timedelta(days=30)

#: Reasons a page is left out (:data:`~sitemapkit.core.outcome.REASONS`) that make a
#: listed URL SM217, with the words its message gives. The others (hidden, excluded, not
#: HTML, out of scope, budget, this run's output) say nothing about the URL's page.
NOT_INDEXABLE: Final = {
    "noindex": "it says noindex ({detail})",
    "canonical elsewhere": "its canonical URL is {detail!r}; list that one instead",
    "error page": "it is the site's error page ({detail})",
    "disallowed by robots.txt": "robots.txt disallows it, so it is never requested",
    "redirect": "it redirects to {detail!r}; list the target instead",
    "error status": "it answers HTTP {status}{detail_paren}",
    "fetch failed": "it could not be fetched ({detail})",
}

_SEEN: Final = 1  # a page arrived for the URL
_INDEXABLE: Final = 2  # … and it may be indexed
_REACHED: Final = 4  # a link reaches it (or it is the start)
_FOUND: Final = 8  # the crawl or the folder found it (not only asked for it)
_NO_DATE: Final = -(1 << 62)


@dataclass(slots=True)
class Coverage:
    """The audit's counts: pages found, listed URLs (distinct), listed and found,
    listed only, found only, and indexable pages (the findings are the report's)."""

    pages: int = 0
    indexable: int = 0
    listed: int = 0
    entries: int = 0
    both: int = 0
    found_only: int = 0

    @property
    def listed_only(self) -> int:
        return self.listed - self.both

    def summary(self) -> dict[str, Any]:
        """The ``pages`` part of the JSON summary."""
        return {
            "crawled": self.pages,
            "listed": self.listed,
            "indexable": self.indexable,
            "listed_and_crawled": self.both,
            "listed_only": self.listed_only,
            "crawled_only": self.found_only,
        }


@dataclass(slots=True)
class AuditReport(ValidationReport):
    """A :class:`~sitemapkit.lint.report.ValidationReport` of an audit: its findings and
    sitemaps, and :attr:`coverage`; its JSON summary has validate's keys and ``pages``.

    >>> AuditReport(files=["sitemap.xml"]).summary()["pages"]["crawled"]
    0
    """

    coverage: Coverage = field(default_factory=Coverage)

    def summary(self) -> dict[str, Any]:
        out = ValidationReport.summary(self)
        out["pages"] = self.coverage.summary()
        return out

    @classmethod
    def joined(cls, validated: ValidationReport, audited: AuditReport) -> AuditReport:
        """One report of a validation and an audit of the same set (``report --audit``):
        both findings, by sitemap, line and column; the validation's documents and
        entries; the audit's coverage."""
        files = [*validated.files, *(f for f in audited.files if f not in validated.files)]
        omitted = Counter(validated.omitted)
        omitted.update(audited.omitted)
        return cls(
            findings=sort_findings([*validated.findings, *audited.findings], files),
            files=files,
            entries=validated.entries,
            not_checked=_union(validated.not_checked, audited.not_checked),
            unreadable=_union(validated.unreadable, audited.unreadable),
            notes=[*validated.notes, *audited.notes],
            excerpts=validated.excerpts,
            omitted=dict(sorted(omitted.items())),
            coverage=audited.coverage,
        )


def _union(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``a``, then what ``b`` says of the documents ``a`` does not name."""
    named = {name for name, _ in a}
    return [*a, *(item for item in b if item[0] not in named)]


class Audit:
    """The comparison of one site: sitemaps in (:meth:`add_sitemap`), then pages
    (:meth:`add`), then :meth:`finish`. Every method returns the findings it decided.

    ``start`` is the URL the crawl started from (a folder's base URL); ``links_reach``
    says that every page's links count, as in a folder, where no page has a depth;
    ``lands`` maps a listed URL (comparison form) to the page URL it lands on, as a
    folder's links are given (``/about`` is ``/about.html``).

    >>> a = Audit(start="https://example.com/", links_reach=True)
    >>> a.add_sitemap([Listed("https://example.com/", None, "s.xml", 3, 8),
    ...                Listed("https://example.com/old", "2024-05-01", "s.xml", 4, 8)])
    []
    >>> home = PageOutcome("https://example.com/", loc="https://example.com/",
    ...                    links=("https://example.com/new",))
    >>> [f.rule for f in a.add(home)]
    []
    >>> [f.rule for f in a.add(PageOutcome("https://example.com/new", loc="https://example.com/new"))]
    ['AUD001']
    >>> [f.rule for f in a.add(PageOutcome("https://example.com/old", loc="https://example.com/old"))]
    []
    >>> [(f.rule, f.where, f.line) for f in a.finish()]
    [('AUD002', 's.xml', 4)]
    """

    def __init__(
        self,
        *,
        start: str | None = None,
        links_reach: bool = False,
        lands: Callable[[str], str] | None = None,
    ) -> None:
        self.start = normalize(start) if start else None
        self.links_reach = links_reach
        self.lands = lands
        self.coverage = Coverage()
        self.sitemaps: list[str] = []
        self._first = HashIndex()
        self._keys = array("q")
        self._file = array("I")
        self._line = array("I")
        self._column = array("I")
        self._lastmod = array("q")
        self._text = bytearray()  # loc, "\n", lastmod of each entry
        self._ends = array("Q")
        self._flags = bytearray()
        self._sorted: array[int] | None = None
        self._order = array("I")

    # -- the sitemaps ----------------------------------------------------------------------

    def add_sitemap(self, entries: Iterable[Listed]) -> list[Finding]:
        """The entries of one more sitemap of the set; AUD004 for each URL an earlier
        sitemap listed (a repeat within one sitemap is the validator's SM215)."""
        if self._sorted is not None:
            raise RuntimeError("sitemaps are added before the pages")
        out: list[Finding] = []
        file = -1
        hashes = []
        for e in entries:
            if file < 0:
                file = len(self.sitemaps)
                self.sitemaps.append(e.sitemap)
            norm = normalize(e.loc)
            key = hash(self.lands(norm) if self.lands is not None else norm)
            first = self._first.get(key)
            if first is not None:
                where = self.sitemaps[first]
                message = f"URL {clip(e.loc)!r} is also listed in {where}; list it in one sitemap"
                out.append(self._finding("AUD004", message, e))
            hashes.append(key)
            self._append(key, file, e)
        if hashes:
            self._first.add(file, hashes)
        return out

    def _append(self, key: int, file: int, e: Listed) -> None:
        self._keys.append(key)
        self._file.append(file)
        self._line.append(e.line or 0)
        self._column.append(e.column or 0)
        moment = instant(e.lastmod) if e.lastmod else None
        self._lastmod.append(_seconds(moment) if moment is not None else _NO_DATE)
        self._text += f"{e.loc}\n{e.lastmod or ''}".encode()
        self._ends.append(len(self._text))
        self._flags.append(0)
        self.coverage.entries += 1

    def _seal(self) -> array[int]:
        """The entries by hash, for lookups (made once, when the first page arrives)."""
        if self._sorted is None:
            keys = self._keys
            self._order = array("I", sorted(range(len(keys)), key=keys.__getitem__))
            self._sorted = array("q", (keys[i] for i in self._order))
            ordered = self._sorted
            self.coverage.listed = sum(
                1 for i in range(len(ordered)) if not i or ordered[i] != ordered[i - 1]
            )
        return self._sorted

    def _slots(self, key: int) -> list[int]:
        ordered = self._seal()
        at = bisect_left(ordered, key)
        out = []
        while at < len(ordered) and ordered[at] == key:
            out.append(self._order[at])
            at += 1
        return out

    def _entry(self, slot: int) -> tuple[str, str]:
        start = self._ends[slot - 1] if slot else 0
        loc, _, lastmod = self._text[start : self._ends[slot]].decode().partition("\n")
        return loc, lastmod

    def _first_slot(self, slot: int) -> bool:
        """Whether ``slot`` is the first entry of its URL (no set of the URLs is held)."""
        ordered = self._seal()
        at = bisect_left(ordered, self._keys[slot])
        return self._order[at] == slot  # a stable sort keeps equal keys in slot order

    def listed(self) -> Iterator[str]:
        """Every listed URL once, in the order first listed: what a crawl requests
        beside the pages links lead to."""
        for slot in range(len(self._keys)):
            if self._first_slot(slot):
                yield self._entry(slot)[0]

    def unseen(self) -> Iterator[str]:
        """The listed URLs no page arrived for yet, each once."""
        for slot in range(len(self._keys)):
            if not self._flags[slot] & _SEEN and self._first_slot(slot):
                yield self._entry(slot)[0]

    # -- the pages -------------------------------------------------------------------------

    def add(self, page: PageOutcome, *, found: bool | None = None) -> list[Finding]:
        """One page as its source judged it. ``found``: the crawl or the folder found it
        (default: it has a depth, or every page counts, ``links_reach``); ``False`` for a
        page only requested because a sitemap lists it."""
        if found is None:
            found = page.depth is not None or self.links_reach
        keys = {hash(normalize(page.url))}
        if page.loc is not None:
            keys.add(hash(normalize(page.loc)))
        slots = [s for k in keys for s in self._slots(k)]
        fresh = [s for s in slots if not self._flags[s] & _SEEN]
        if found:
            self.coverage.pages += 1
            if page.listed:
                self.coverage.indexable += 1
            if not slots:
                self.coverage.found_only += 1
            elif not any(self._flags[s] & _FOUND for s in slots):
                self.coverage.both += 1
        reached = page.depth is not None or (
            self.start is not None and normalize(page.url) == self.start
        )
        flags = _SEEN | (_INDEXABLE if _indexable(page) else 0) | (_FOUND if found else 0)
        flags |= _REACHED if reached else 0
        for s in slots:
            self._flags[s] |= flags
        if page.depth is not None or self.links_reach:
            self._follow(page, keys)
        out: list[Finding] = []
        if found and page.listed and not slots:
            out.append(self._unlisted(page))
        for s in fresh:
            out += self._judge(s, page)
        return out

    def _follow(self, page: PageOutcome, own: set[int]) -> None:
        for link in page.links:
            key = hash(link)
            if key in own:
                continue  # a page's link to itself reaches nothing new
            for s in self._slots(key):
                self._flags[s] |= _REACHED

    def _unlisted(self, page: PageOutcome) -> Finding:
        loc = page.loc or page.url
        how = (
            f"links reach it at depth {page.depth}"
            if page.depth is not None
            else "a page of the build folder"
        )
        message = f"Indexable page {clip(loc)!r} is in no sitemap of the set ({how}); list it"
        return Finding("AUD001", severity("AUD001"), message, page.url, loc=loc)

    def _judge(self, slot: int, page: PageOutcome) -> list[Finding]:
        """SM217 or AUD003 for the entry ``slot``, the page of its URL having arrived."""
        loc, lastmod = self._entry(slot)
        if page.reason in NOT_INDEXABLE:
            why = NOT_INDEXABLE[page.reason].format(
                detail=page.detail or "",
                status=page.status if page.status is not None else "an error",
                detail_paren=f" ({page.detail})" if page.detail else "",
            )
            message = f"Listed URL {clip(loc)!r} is not indexable: {why}"
            return [self._at("SM217", message, slot, loc)]
        drift = self._drift(slot, lastmod, page)
        return [self._at("AUD003", drift, slot, loc)] if drift else []

    def _drift(self, slot: int, lastmod: str, page: PageOutcome) -> str | None:
        listed = self._lastmod[slot]
        own = page.modified or page.last_modified
        if listed == _NO_DATE or own is None:
            return None
        moment = instant(own)
        if moment is None:
            return None
        what = "page's own date" if page.modified else "Last-Modified header"
        delta = listed - _seconds(moment)
        if delta > LATER.total_seconds():
            return (
                f"Listed lastmod {lastmod!r} is {_span(delta)} later than the {what} {own!r}; "
                "a lastmod says when the page last changed"
            )
        if -delta > EARLIER.total_seconds():
            return (
                f"Listed lastmod {lastmod!r} is {_span(-delta)} earlier than the {what} {own!r}; "
                "update it when the page changes"
            )
        return None

    def finish(self) -> list[Finding]:
        """AUD002 for each listed, indexable page that no link reaches."""
        self._seal()
        out = []
        want = _SEEN | _INDEXABLE
        for slot, flags in enumerate(self._flags):
            if flags & want == want and not flags & _REACHED:
                loc, _ = self._entry(slot)
                message = (
                    f"Listed URL {clip(loc)!r} is indexable but no link reaches it "
                    "(an orphan page); link to it from a page of the site"
                )
                out.append(self._at("AUD002", message, slot, loc))
        return out

    # -- findings --------------------------------------------------------------------------

    def _at(self, rule: str, message: str, slot: int, loc: str) -> Finding:
        return Finding(
            rule,
            severity(rule),
            message,
            self.sitemaps[self._file[slot]],
            self._line[slot] or None,
            self._column[slot] or None,
            loc,
        )

    def _finding(self, rule: str, message: str, e: Listed) -> Finding:
        return Finding(rule, severity(rule), message, e.sitemap, e.line, e.column, e.loc)


def _indexable(page: PageOutcome) -> bool:
    """A page that may be indexed: listed, or a document that is not HTML (a PDF)."""
    return page.listed or page.reason == "not HTML"


def _seconds(moment: dt.datetime) -> int:
    return int(moment.timestamp())


def _span(seconds: int) -> str:
    """An exact span (``1 day, 0:00:01``): a message near a threshold must not round."""
    return str(dt.timedelta(seconds=seconds))
