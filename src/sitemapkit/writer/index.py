"""writer: the sitemap index over the shards, and the last step both modes share.

An index file lists at most ``max_index_entries`` sitemaps in at most ``max_bytes``
(sitemaps.org: an index "may not list more than 50,000 Sitemaps and must be no
larger than 50MB"); more shards than one index holds make several, reported in a note.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Mapping

from ..core.model import SitemapRef
from ..core.serialize import footer, header, sitemap_entry
from ..core.w3cdate import instant
from ..errors import InputError
from ..io.files import Publisher
from .result import FileInfo, WriteResult
from .settings import Settings

__all__ = ["Latest", "publish", "refuse_many", "write_indexes"]


def _instant(text: str) -> dt.datetime | None:
    """The instant of a lastmod, a bare date at its day's start in UTC (None: not a date).

    So a bare date wins only over instants before its day began in UTC, which no page
    can show as a later local date: the index's date is never before a page's. A
    fraction of a second counts (to the microsecond).
    """
    return instant(text)


class Latest:
    """The latest of a shard's lastmods, compared as instants (offsets included).

    The values are in the writer's form (``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm:ss±hh:mm``
    with perhaps a fraction before the offset, see ``format_lastmod``), so values of one
    offset compare as text (a fraction's digits order as its value; a value without one
    sorts first, as ``+`` and ``-`` sort before ``.``): only the latest of each offset is
    parsed. :attr:`value` is the winning entry's own text, so the index states the same
    instant in the same form as the entry.

    >>> last = Latest()
    >>> last.add_all([b"2024-05-02T01:00:00+05:00", b"2024-05-01T22:00:00-05:00"])
    >>> last.value
    '2024-05-01T22:00:00-05:00'
    >>> last.add("2024-05-02")  # from 00:00 UTC: before 22:00-05:00 of the day before
    >>> last.add("not a date")
    >>> last.value
    '2024-05-01T22:00:00-05:00'
    >>> last.add("2024-05-03")
    >>> last.value
    '2024-05-03'
    """

    __slots__ = ("_at", "value")

    def __init__(self) -> None:
        self.value: str | None = None
        self._at: dt.datetime | None = None

    def add(self, text: str | None) -> None:
        """Take one lastmod (``None`` or ``""``: the entry has none)."""
        if not text or text == self.value:
            return
        at = _instant(text)
        if at is None:  # not a date (a record read as it was): it says nothing newer
            return
        if self._at is None or at > self._at:
            self.value, self._at = text, at

    def add_all(self, values: Iterable[bytes]) -> None:
        """Take a block's lastmods (the fast path's bytes).

        Only values within two days of the textual maximum can hold the latest instant (an
        offset moves an instant by at most 14 hours from its local time): that filter runs
        at C speed, and the grouping by offset sees the few left.
        """
        values = values if isinstance(values, list) else list(values)
        if b"" in values:  # entries without one
            values = [v for v in values if v]
        if not values:
            return
        top = max(values)
        try:
            day = dt.date.fromisoformat(top[:10].decode())
        except ValueError:
            pass  # not the writer's form: every value is a candidate
        else:
            floor = (day - dt.timedelta(days=2)).isoformat().encode()
            values = [v for v in values if v >= floor]
        groups: dict[bytes, bytes] = {}
        for v in set(values):
            key = v[-6:] if len(v) > 10 else b""  # the offset of an instant; b"" for a date
            best = groups.get(key)
            if best is None or v > best:
                groups[key] = v
        for v in groups.values():
            self.add(v.decode())


def write_indexes(
    s: Settings,
    publisher: Publisher,
    names: list[str],
    notes: list[str],
    lastmods: Mapping[str, str] | None = None,
) -> list[FileInfo]:
    """Index files over ``names``, each within the entry and byte limits (exactly)."""
    head = header("sitemapindex", 0, s.stylesheet)
    tail = footer("sitemapindex")
    fixed = len(head.encode()) + len(tail.encode())
    max_bytes = s.limits.bytes
    groups: list[list[str]] = [[]]
    size = fixed
    for n in names:
        lm = lastmods.get(n) if lastmods else None
        entry = sitemap_entry(SitemapRef(s.base_url + n, lastmod=lm))
        b = len(entry.encode())
        if fixed + b > max_bytes:
            raise InputError(
                f"an index entry ({b} bytes) does not fit in {max_bytes:,} bytes",
                hint="raise --max-bytes",
            )
        if len(groups[-1]) >= s.max_index_entries or size + b > max_bytes:
            groups.append([])
            size = fixed
        groups[-1].append(entry)
        size += b
    out = []
    for k, group in enumerate(groups, 1):
        iname = f"{s.name}.xml" if len(groups) == 1 else f"{s.name}-index-{k}.xml"
        data = (head + "".join(group) + tail).encode()
        publisher.stage(iname).write_bytes(data)
        out.append(FileInfo(iname, "sitemapindex", len(group), len(data), len(data)))
    if len(groups) > 1:
        notes.append(
            f"{len(names):,} sitemaps need {len(groups)} index files (an index lists at "
            f"most {s.max_index_entries:,} sitemaps in at most {max_bytes:,} "
            f"bytes); submit each index: {', '.join(i.name for i in out)}"
        )
    return out


def refuse_many(s: Settings, shards: int) -> None:
    """``index="never"`` allows one sitemap only."""
    if s.index == "never" and shards > 1:
        raise InputError(
            f"the URLs need {shards} sitemaps but --index never allows only one",
            hint="use --index auto, or raise the limits",
        )


def publish(
    s: Settings,
    publisher: Publisher,
    result: WriteResult,
    infos: list[FileInfo],
    lastmods: Mapping[str, str],
    *,
    single: bool,
    committed: Callable[[], None] | None = None,
) -> None:
    """Name the staged shards, index them, check the set, and swap it in (the index last).

    ``infos`` are the staged shards under their numbered names (``single``: the one
    sitemap, no index), ``lastmods`` their index lastmods. A shard that changed takes a
    name the live index does not use (:meth:`Publisher.place`), so the index is the one
    commit point. ``committed`` runs once the new index is live, before the old set's
    files are removed.
    """
    publisher.begin()
    if single:
        indexes: list[FileInfo] = []
        files, last = [], [infos[0].name]
    else:
        names = publisher.place([i.name for i in infos], s.ext)
        infos = [dataclasses.replace(i, name=names[i.name]) for i in infos]
        final = {names[n]: lm for n, lm in lastmods.items()}
        indexes = write_indexes(s, publisher, [i.name for i in infos], result.notes, final)
        files, last = [i.name for i in infos], [i.name for i in indexes]
    result.files = infos + indexes
    result.indexes = [i.name for i in indexes]
    result.urls = sum(i.entries for i in infos)
    s.check_staged(publisher.stage, [*files, *last])
    result.removed = publisher.publish(files, last, committed)
    # what the folder shows changed: a shard the state had but whose live file was gone or
    # edited is written again as much as one whose entries changed
    result.rewritten = [i.name for i in infos if i.name in publisher.replaced]
    result.notes.extend(publisher.notes)
