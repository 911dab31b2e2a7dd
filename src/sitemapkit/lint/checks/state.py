"""lint.checks: what the entry checks of one document read and write. Pure.

The entry checks (:mod:`.loc`, :mod:`.duplicate`, :mod:`.date`, :mod:`.extension`,
:mod:`.aggregate`) are functions over two values: the :class:`Batch` of records being
checked (its locs, how often each was seen before, the locs joined for searching at C
speed) and the document's :class:`EntryState` (what earlier batches left: the
:class:`Listed` locs, the :class:`Tally` of values, the sitemap's :class:`Place`, and the
findings so far). :class:`~.entry.FileChecks` drives them. Decides no rule.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from ...core.finding import Finding, Severity
from ...core.model import SitemapRef, Url
from ...core.rules import severity
from ...core.urls import Origin, iri_to_uri
from .context import Context
from .position import Pending

if TYPE_CHECKING:
    from .set import SetChecks

__all__ = ["AlternateEntry", "Batch", "EntryState", "Listed", "Place", "Record", "Tally"]

Record = Url | SitemapRef
R = TypeVar("R", Url, SitemapRef, Record)


@dataclass(frozen=True, slots=True)
class Batch(Generic[R]):
    """A batch of records given to :meth:`~.entry.FileChecks.add`, in document order.

    ``occurrences[i]`` counts the records with the loc of record ``i`` that came before
    it in the document (0 for the first); ``blob`` is the locs joined by line breaks
    (a loc holds none), so one search finds what few records a rule is about.
    """

    records: Sequence[R]
    locs: list[str]
    occurrences: list[int]
    blob: str

    def matches(self, pattern: re.Pattern[str]) -> Iterator[tuple[int, re.Match[str]]]:
        """``(record index, match)`` of a pattern over the locs (one match per loc)."""
        blob = self.blob
        i = prev = 0
        last = -1
        for m in pattern.finditer(blob):
            i += blob.count("\n", prev, m.start())
            prev = m.start()
            if i != last:
                last = i
                yield i, m


@dataclass(frozen=True, slots=True)
class Place:
    """Where the sitemap is published, for the location rules: its ``origin`` with the
    path cut to its directory, that directory as a URL ``prefix``, and the waived hosts
    and origins (SM214)."""

    origin: Origin
    prefix: str
    allow: tuple[str, ...]

    @classmethod
    def of(cls, ctx: Context) -> Place | None:
        """The place of ``ctx.url``; None when it is unknown or not http(s)."""
        if ctx.url is None:
            return None
        try:
            origin = Origin.of(iri_to_uri(ctx.url))
        except ValueError:
            return None
        if origin.scheme not in ("http", "https"):
            return None
        directory = origin.path[: origin.path.rfind("/") + 1]
        default = 443 if origin.scheme == "https" else 80
        port = "" if origin.port == default else f":{origin.port}"
        prefix = f"{origin.scheme}://{origin.host}{port}{directory}"
        return cls(origin._replace(path=directory), prefix, ctx.allow)

    def waives(self, o: Origin) -> bool:
        """Whether ``--allow-host`` names the host or origin of ``o`` (SM214)."""
        for item in self.allow:
            if "://" in item:
                try:
                    a = Origin.of(iri_to_uri(item))
                except ValueError:
                    continue
                if (a.scheme, a.host, a.port) == (o.scheme, o.host, o.port):
                    return True
            elif item.strip().lower().rstrip(".") == o.host:
                return True
        return False


@dataclass(slots=True)
class Listed:
    """The locs of the document so far, for the duplicate checks (and the set's).

    ``seen``: loc → how many records had it; ``norms``: normalised form → first loc
    (only where normalising changes a loc, and for an index's children); ``variants``:
    variant key (SM216) → first loc.
    """

    seen: dict[str, int] = field(default_factory=dict)
    norms: dict[str, str] = field(default_factory=dict)
    variants: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Tally:
    """Counts over the document's records, for the file-level checks (:mod:`.aggregate`)."""

    records: int = 0
    index: bool = False  # the records are <sitemap>s
    max_day: str = ""  # the latest lastmod date seen (SM508 across the set)
    lastmods: Counter[str] = field(default_factory=Counter)
    with_lastmod: int = 0
    without_lastmod: int = 0  # children of an index
    priorities: set[float] = field(default_factory=set)  # up to two distinct values
    with_priority: int = 0
    with_changefreq: int = 0


@dataclass(slots=True)
class AlternateEntry:
    """A ``<url>`` with hreflang annotations, kept for the set's reciprocity check."""

    loc: str
    norm: str
    occurrence: int
    pairs: frozenset[tuple[str, str]]
    line: int | None = None


class EntryState:
    """What the entry checks know of one document, and where their findings go.

    Findings about a record wait in ``pending`` (:meth:`emit`); file-level ones go to
    ``findings``. ``shared`` is the set the document belongs to, if any; ``now`` and
    ``future_day`` (the first lastmod date that may lie in the future) serve the date
    heuristics.
    """

    def __init__(self, where: str | None, ctx: Context, shared: SetChecks | None) -> None:
        self.where = where
        self.ctx = ctx
        self.shared = shared
        self.place = Place.of(ctx)
        self.listed = Listed()
        self.tally = Tally()
        self.pending: list[Pending] = []
        self.findings: list[Finding] = []
        self.alternates: list[AlternateEntry] = []
        self.children: list[tuple[str, str | None, int]] = []  # (loc, lastmod, occurrence)
        self.now = ctx.now
        self.future_day = ""
        if ctx.now is not None:
            limit = ctx.now + ctx.future_tolerance
            self.future_day = (limit - dt.timedelta(days=2)).date().isoformat()

    def emit(
        self,
        rule: str,
        message: str,
        batch: Batch[R],
        i: int,
        *,
        override: Severity | None = None,
        see: tuple[str, int] | None = None,
        element: str | None = None,
    ) -> None:
        """A finding about record ``i`` of ``batch``; ``override`` is a severity the
        caller decides on purpose (commented there), else the catalogue's; ``element``
        the path of the element it judges (:func:`~.position.element_path`; ``None``:
        the ``<loc>``)."""
        sev = override or severity(rule, strict=self.ctx.strict)
        loc, occurrence = batch.locs[i], batch.occurrences[i]
        self.pending.append(Pending(rule, sev, message, loc, occurrence, see, element))

    def report(self, rule: str, message: str) -> None:
        """A file-level finding, with the catalogue's severity."""
        sev = severity(rule, strict=self.ctx.strict)
        self.findings.append(Finding(rule, sev, message, self.where))
