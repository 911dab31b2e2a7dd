"""lint.checks: the entry checks of one document, fed in batches (:class:`FileChecks`). Pure.

The order of the checks is written here, once (a finding's place among those of its line
follows it). Each check lives with its rule family and says which ids it decides:

* :mod:`.duplicate`: SM215, SM216 (duplicates and variants), SM507 (a child listed twice);
* :mod:`.loc`: SM207-SM213, SM218 (the form and place of a loc), SM504, SM505 (children);
* :mod:`.date`: SM305, SM307 (future and epoch-like lastmods);
* :mod:`.extension`: IMG, VID, NEWS and HRE entry rules;
* :mod:`.aggregate`: SM306, SM404, SM405, SM508 (file-level counts, after the last batch).

Decides no rule itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Final, cast

from ...core.finding import Finding
from ...core.model import SitemapRef, Url
from . import aggregate, date, duplicate, extension, loc
from .context import Context
from .position import Pending
from .state import AlternateEntry, Batch, EntryState, Record

if TYPE_CHECKING:
    from .set import SetChecks

__all__ = ["FileChecks"]

_URL_CHECKS: Final[tuple[Callable[[EntryState, Batch[Url]], None], ...]] = (
    duplicate.duplicate_urls,
    loc.url_location,
    loc.double_escaped,
    loc.fragment,
    loc.session_id,
    loc.long_url,
    date.url_dates,
    aggregate.count_values,
    extension.check_extensions,
)
_INDEX_CHECKS: Final[tuple[Callable[[EntryState, Batch[SitemapRef]], None], ...]] = (
    duplicate.duplicate_children,
    loc.child_location,
    loc.double_escaped,
    date.ref_dates,
)
_FILE_CHECKS: Final[tuple[Callable[[EntryState], None], ...]] = (
    aggregate.stamped,
    aggregate.ignored_tags,
    aggregate.equal_priorities,
    aggregate.index_lastmods,
)
_LOC: Final = attrgetter("loc")


class FileChecks:
    """The entry checks of one document: feed records with :meth:`add`, then :meth:`finish`.

    Findings that belong to a record are kept in ``pending`` (see :class:`Pending`);
    file-level ones in ``findings``. ``shared`` links the document to its set, for the
    duplicate and hreflang checks across files. ``state`` is what the checks share
    (:class:`~.state.EntryState`); each batch reaches them as a :class:`~.state.Batch`.
    """

    def __init__(self, where: str | None, ctx: Context, shared: SetChecks | None = None) -> None:
        self.state = EntryState(where, ctx, shared)
        self.file_index = shared.add_file(where) if shared is not None else -1
        self._occurrences: list[int] = []

    def add(self, records: Sequence[Record]) -> None:
        """Check a batch of records (in document order)."""
        if not records:
            return
        state = self.state
        seen = state.listed.seen
        locs: list[str] = list(map(_LOC, records))
        fresh = dict.fromkeys(locs, 1)
        if len(fresh) == len(locs) and seen.keys().isdisjoint(fresh.keys()):
            seen.update(fresh)
            occ = [0] * len(locs)
        else:
            occ = []
            for value in locs:
                n = seen.get(value, 0)
                seen[value] = n + 1
                occ.append(n)
        self._occurrences = occ
        blob = "\n".join(locs)
        state.tally.records += len(records)
        # the reader never mixes <url> and <sitemap> records in one document
        if isinstance(records[0], SitemapRef):
            state.tally.index = True
            refs = Batch(cast("list[SitemapRef]", list(records)), locs, occ, blob)
            for ref_check in _INDEX_CHECKS:
                ref_check(state, refs)
        else:
            urls = Batch(cast("list[Url]", list(records)), locs, occ, blob)
            for url_check in _URL_CHECKS:
                url_check(state, urls)

    @property
    def occurrences(self) -> list[int]:
        """For each record of the last batch given to :meth:`add`, how many records with
        the same loc came before it in the document (0 for the first): with the loc, it
        names the record for :func:`resolve_places`."""
        return self._occurrences

    def finish(self) -> None:
        """The file-level checks; call once after the last batch."""
        state = self.state
        for check in _FILE_CHECKS:
            check(state)
        if state.shared is not None:
            state.shared.merge(self.file_index, state)

    # -- what the driver reads -------------------------------------------------------

    @property
    def pending(self) -> list[Pending]:
        """The findings about records, waiting for their lines."""
        return self.state.pending

    @property
    def findings(self) -> list[Finding]:
        """The file-level findings."""
        return self.state.findings

    @property
    def alternates(self) -> list[AlternateEntry]:
        """The ``<url>`` entries with hreflang annotations (their lines to be set)."""
        return self.state.alternates

    @property
    def children(self) -> list[tuple[str, str | None, int]]:
        """An index's children: ``(loc, lastmod, occurrence)``."""
        return self.state.children

    @property
    def max_day(self) -> str:
        """The latest lastmod date of the document (SM508 across the set)."""
        return self.state.tally.max_day
