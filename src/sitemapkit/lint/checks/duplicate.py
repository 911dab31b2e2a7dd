"""lint.checks: URLs listed twice, in a document and across the set. Pure.

Decides SM215 (exact and normalised duplicates, in the file and across the files of the
set), SM216 (variants of one page: http/https, www, a trailing slash) and SM507 (an index
lists a child twice). Across files, the set's :class:`~.hashindex.HashIndex` tables answer
by hash.
"""

from __future__ import annotations

import re
from operator import ne
from typing import TYPE_CHECKING, Final

from ...core.finding import clip
from ...core.model import SitemapRef, Url
from ...core.urls import normalize
from .context import CHECKED
from .state import Batch, EntryState

if TYPE_CHECKING:
    from .set import SetChecks

__all__ = ["duplicate_children", "duplicate_urls"]


def _variant_key(norm: str) -> str:
    """http/https, www and a trailing slash ignored (SM216)."""
    rest = norm.partition("://")[2]
    if rest.startswith("www."):
        rest = rest[4:]
    return rest[:-1] if rest.endswith("/") else rest


def _variant_keys(norms: list[str]) -> list[str]:
    """``_variant_key`` of each URL: by slicing when the batch shares one origin (the usual
    case), else with a few ``str.replace`` over the joined batch."""
    first = norms[0]
    end = first.find("/", first.find("://") + 3)
    text = "\n" + "\n".join(norms) + "\n"
    if end > 0 and text.count("\n" + first[: end + 1]) == len(norms):
        head = first[first.index("://") + 3 : end]
        head = head[4:] if head.startswith("www.") else head
        return [head + (n[end:-1] if n[-1] == "/" else n[end:]) for n in norms]
    text = text.replace("\nhttps://", "\n").replace("\nhttp://", "\n").replace("\nwww.", "\n")
    keys = text.replace("/\n", "\n")[1:-1].split("\n")
    if len(keys) != len(norms):  # a URL with a line break (cannot come from the reader)
        return [_variant_key(n) for n in norms]
    return keys


_PORT: Final = re.compile(r"://[^/\n]*:")
# A percent-escape that normalisation rewrites: lowercase hex, or an unreserved character
# (ALPHA, DIGIT, "-", ".", "_", "~"; RFC 3986 §2.3, §6.2.2.2).
_PCT_CHANGES: Final = re.compile(
    r"%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-F]|2[DE]|3[0-9]|[46][1-9A-F]|5[0-9AF]|7[0-9AE])"
)
_DOT_SEGMENT: Final = re.compile(r"/\.\.?(?:[/?#\n]|$)")
_HASH: Final = re.compile("#")


@CHECKED.decides("SM215", "SM216")
def duplicate_urls(st: EntryState, batch: Batch[Url]) -> None:
    """SM215 exact and normalised duplicates, SM216 variants; in the file and the set.

    The common case (nothing repeats) is decided with set operations over the whole batch;
    only a batch with a repeat is looked at URL by URL.
    """
    locs, occ = batch.locs, batch.occurrences
    shared = st.shared if st.shared is not None and st.shared.tracking else None
    norms = locs
    rows = _unnormal(batch)
    if rows:
        norms = list(locs)
        for i in rows:
            norms[i] = normalize(locs[i])
    keys = _variant_keys(norms)
    key_set = set(keys)
    if (
        not any(occ)
        and (norms is locs or not any(map(ne, norms, locs)))
        and len(key_set) == len(keys)
        and st.listed.variants.keys().isdisjoint(key_set)
        and (not st.listed.norms or st.listed.norms.keys().isdisjoint(locs))
        and (shared is None or not _across(shared, locs, norms, keys))
    ):
        st.listed.variants.update(zip(keys, locs, strict=True))
        return
    for i in range(len(locs)):
        _duplicate(st, batch, i, norms[i], keys[i])


def _unnormal(batch: Batch[Url]) -> set[int]:
    """The batch's records whose loc ``normalize`` may change (found in the joined locs)."""
    blob = batch.blob
    rows: set[int] = set()
    if "%" in blob:
        rows.update(i for i, _ in batch.matches(_PCT_CHANGES))
    if "#" in blob:
        rows.update(i for i, _ in batch.matches(_HASH))
    if "/." in blob:
        rows.update(i for i, _ in batch.matches(_DOT_SEGMENT))
    if blob.count(":") != blob.count("://"):
        rows.update(i for i, _ in batch.matches(_PORT))
    return rows


def _across(shared: SetChecks, locs: list[str], norms: list[str], keys: list[str]) -> bool:
    """Whether any URL of the batch meets one of earlier files (by hash)."""
    return not (
        (not shared.exact or shared.exact.isdisjoint(map(hash, locs)))
        and (not shared.norm or shared.norm.isdisjoint(map(hash, norms)))
        and (not shared.variant or shared.variant.isdisjoint(map(hash, keys)))
    )


def _duplicate(st: EntryState, batch: Batch[Url], i: int, norm: str, vkey: str) -> None:
    """SM215/SM216 for record ``i`` of a batch that has a repeat (``norm`` its normalised
    loc, ``vkey`` its variant key)."""
    shared = st.shared if st.shared is not None and st.shared.tracking else None
    loc = batch.locs[i]
    norms, seen = st.listed.norms, st.listed.seen
    first = st.listed.variants.setdefault(vkey, loc)
    if batch.occurrences[i]:
        st.emit(
            "SM215",
            f"Duplicate URL {clip(loc)!r}, listed before at {{see}}; list each URL once",
            batch,
            i,
            see=(loc, 0),
        )
        return
    first_file = shared.exact.get(hash(loc)) if shared is not None else None
    if shared is not None and first_file is not None:
        other = shared.files[first_file]
        st.emit("SM215", f"Duplicate URL {clip(loc)!r}, also listed in {other}", batch, i)
        return
    same = None
    if norm != loc:
        same = norms.get(norm) or (norm if norm in seen else None)
        norms.setdefault(norm, loc)
    elif loc in norms and norms[loc] != loc:
        same = norms[loc]
    if same is not None:
        st.emit(
            "SM215",
            f"URL {clip(loc)!r} is the same as {clip(same)!r} after normalisation (case, "
            "default port, percent-escapes, dot-segments, fragment); list it once, in one form",
            batch,
            i,
        )
        return
    if shared is not None and (
        hash(norm) in shared.norm or (norm != loc and hash(norm) in shared.exact)
    ):
        st.emit(
            "SM215",
            f"URL {clip(loc)!r} duplicates a URL of another sitemap of the set after "
            "normalisation; list it once",
            batch,
            i,
        )
        return
    if first != loc:
        st.emit(
            "SM216",
            f"{clip(loc)!r} and {clip(first)!r} are variants of one page (http/https, www, "
            "trailing slash); list only the canonical URL",
            batch,
            i,
        )
    elif shared is not None and (variant_file := shared.variant.get(hash(vkey))) is not None:
        other = shared.files[variant_file]
        st.emit(
            "SM216",
            f"{clip(loc)!r} is a variant (http/https, www, trailing slash) of a URL in "
            f"{other}; list only the canonical URL",
            batch,
            i,
        )


@CHECKED.decides("SM507")
def duplicate_children(st: EntryState, batch: Batch[SitemapRef]) -> None:
    """SM507: a child sitemap listed twice by one index."""
    norms = st.listed.norms
    for i, loc in enumerate(batch.locs):
        if batch.occurrences[i]:
            st.emit(
                "SM507",
                f"The index lists {clip(loc)!r} again (first at {{see}}); list each sitemap once",
                batch,
                i,
                see=(loc, 0),
            )
            continue
        norm = normalize(loc)
        first = norms.setdefault(norm, loc)
        if first != loc:
            st.emit(
                "SM507",
                f"The index lists {clip(loc)!r}, the same sitemap as {clip(first)!r}; "
                "list each sitemap once",
                batch,
                i,
            )
