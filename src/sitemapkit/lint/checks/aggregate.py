"""lint.checks: what only the whole document's records show, decided after the last batch. Pure.

Decides SM306 (lastmods stamped at build time), SM404 (changefreq and priority, which
Google and Bing ignore; off by default), SM405 (one priority for every URL) and SM508's
file half (an index's children without lastmod; the set half is :mod:`.set`'s).
:func:`count_values` keeps the tally they read, batch by batch.
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from operator import attrgetter, is_not
from typing import Final, cast

from ...core.model import Url
from .context import CHECKED
from .date import instant_bounds
from .state import Batch, EntryState

__all__ = ["count_values", "equal_priorities", "ignored_tags", "index_lastmods", "stamped"]

_PRIORITY: Final = attrgetter("priority")
_CHANGEFREQ: Final = attrgetter("changefreq")
_NOT_NONE: Final = partial(is_not, None)


def count_values(st: EntryState, batch: Batch[Url]) -> None:
    """Count the batch's priorities and changefreqs (SM404, SM405)."""
    urls = batch.records
    prios = cast("list[float]", list(filter(_NOT_NONE, map(_PRIORITY, urls))))
    if prios:
        st.tally.with_priority += len(prios)
        if len(st.tally.priorities) < 2:
            st.tally.priorities.update(prios)
    st.tally.with_changefreq += len(urls) - list(map(_CHANGEFREQ, urls)).count(None)


@CHECKED.decides("SM306")
def stamped(st: EntryState) -> None:
    """SM306: lastmod stamped at build time (nearly all identical, or the file's own time)."""
    total = st.tally.with_lastmod
    if total < 20:
        return
    value, count = st.tally.lastmods.most_common(1)[0]
    if count >= 0.95 * total:
        st.report(
            "SM306",
            f"Of {total:,} lastmod values, {count:,} are {value!r}; lastmod should be each "
            "page's last significant change, not the time the sitemap was built",
        )
        return
    modified = st.ctx.modified
    if modified is None or len(st.tally.lastmods) > 3600:
        return
    minute = modified.astimezone(dt.UTC).replace(second=0, microsecond=0)
    for text in st.tally.lastmods:
        bounds = instant_bounds(text)
        if bounds is None or bounds[0] != bounds[1]:
            return
        if bounds[0].astimezone(dt.UTC).replace(second=0, microsecond=0) != minute:
            return
    st.report(
        "SM306",
        f"Every lastmod lies in the minute the file was written ({minute:%Y-%m-%d %H:%M} "
        "UTC); lastmod should be each page's last change, not the build time",
    )


@CHECKED.decides("SM404")
def ignored_tags(st: EntryState) -> None:
    """SM404: changefreq and priority are ignored by Google and Bing (off by default)."""
    n = max(st.tally.with_changefreq, st.tally.with_priority)
    if n:
        st.report(
            "SM404",
            f"The sitemap gives <changefreq> or <priority> for {n:,} URLs; Google and Bing "
            "ignore both, so they can be omitted",
        )


@CHECKED.decides("SM405")
def equal_priorities(st: EntryState) -> None:
    """SM405: one priority for every URL carries no information."""
    if st.tally.index or st.tally.records < 2 or st.tally.with_priority != st.tally.records:
        return
    if len(st.tally.priorities) == 1:
        value = next(iter(st.tally.priorities))
        st.report(
            "SM405",
            f"Every URL has priority {value:.1f}; priority is relative within the site, "
            "so equal values say nothing (omit them)",
        )


@CHECKED.decides("SM508")
def index_lastmods(st: EntryState) -> None:
    """SM508 (file half): children of an index without lastmod."""
    if not st.tally.index or st.tally.records < 2 or not st.tally.without_lastmod:
        return
    st.report(
        "SM508",
        f"The index gives no <lastmod> for {st.tally.without_lastmod:,} of its "
        f"{st.tally.records:,} sitemaps; give each child file's modification time so crawlers "
        "fetch only changed sitemaps",
    )
