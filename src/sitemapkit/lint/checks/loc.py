"""lint.checks: the form and the place of each entry's loc. Pure.

Decides SM207 (escaped twice), SM208 (a fragment), SM209 (a session id), SM218 (over
1,024 characters), SM210-SM213 (another host, scheme, port or directory than the sitemap's:
the sitemaps.org "Sitemap file location" rule, waived by SM214) and, for an index's
children, SM504 and SM505.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ...core.finding import clip
from ...core.model import SitemapRef, Url
from ...core.urls import Origin
from .context import CHECKED
from .state import Batch, EntryState, Place, R

__all__ = [
    "child_location",
    "double_escaped",
    "fragment",
    "long_url",
    "session_id",
    "url_location",
]

_SESSION: Final = re.compile(r"(?:[;?&]jsessionid=|phpsessid=|[?&;]sid=|sessionid=)", re.I)
_DOUBLE_ESCAPED: Final = re.compile(r"&(?:amp|lt|gt|quot|apos);|&#|%25[0-9A-Fa-f]{2}")
_HASH: Final = re.compile("#")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _location(st: EntryState, batch: Batch[R], place: Place, i: int, index: bool) -> None:
    """SM210-SM213 (SM504, SM505 for an index) for record ``i``, which may be elsewhere."""
    d = place.origin
    loc = batch.locs[i]
    try:
        o = Origin.of(loc)
    except ValueError:
        return  # not absolute: the reader reported it
    if place.waives(o):
        return
    what = "child sitemap" if index else "URL"
    hint = (
        "; an index lists only sitemaps of its own site"
        if index
        else "; a sitemap lists URLs of its own site only"
    )
    # the waiver (SM214), said with every location finding: how to prove it, how to pass it
    site = f"{o.scheme}://{o.host}"
    if o.port != _DEFAULT_PORTS.get(o.scheme):
        site += f":{o.port}"
    allow = o.host if site == f"{o.scheme}://{o.host}" else site
    cross = (
        f". Allowed when {site}/robots.txt names this sitemap in a 'Sitemap:' line "
        f"(cross-submission): then validate with --allow-host {allow} (and write with "
        "--no-location-check)"
    )
    # sitemaps.org: "all URLs listed in the Sitemap must use the same protocol ... and
    # reside on the same host" and "can include any URLs starting with" its directory
    if o.host != d.host:
        www = o.host.removeprefix("www.") == d.host.removeprefix("www.")
        label = ""
        if www:
            label = (
                " (path mismatch: "
                + ("includes www" if o.host.startswith("www.") else "missing www")
                + ")"
            )
        rule = "SM504" if index else "SM210"
        why = f"is on host {o.host!r}, not the sitemap's host {d.host!r}{label}{hint}"
    elif o.scheme != d.scheme:
        rule = "SM504" if index else "SM211"
        why = (
            f"uses {o.scheme}, but the sitemap is served over {d.scheme}; use "
            f"{d.scheme}://{d.host}/… URLs"
        )
    elif o.port != d.port:
        rule = "SM504" if index else "SM212"
        why = (
            f"is on port {o.port}, the sitemap on port {d.port}; every URL must use the "
            "sitemap's port"
        )
    elif not o.path.startswith(d.path):
        rule = "SM505" if index else "SM213"
        why = (
            f"is outside the sitemap's directory {place.prefix!r}; a sitemap covers only its "
            "own folder and below, so move the sitemap up (e.g. to the site root) or drop the URL"
        )
    else:
        return
    st.emit(rule, f"The {what} {clip(loc)!r} {why}{cross}", batch, i)


@CHECKED.decides("SM210", "SM211", "SM212", "SM213")
def url_location(st: EntryState, batch: Batch[Url]) -> None:
    """SM210-SM213: the sitemaps.org "Sitemap file location" rule (waived by SM214)."""
    place = st.place
    if place is None:
        return
    prefix = place.prefix
    blob = "\n" + batch.blob
    if blob.count("\n" + prefix) == len(batch.locs) and "/." not in blob:
        return
    for i, loc in enumerate(batch.locs):
        if not loc.startswith(prefix) or "/." in loc:
            _location(st, batch, place, i, False)


@CHECKED.decides("SM504", "SM505")
def child_location(st: EntryState, batch: Batch[SitemapRef]) -> None:
    """SM504 same site, SM505 same directory or below, for an index's children."""
    place = st.place
    if place is None:
        return
    for i, loc in enumerate(batch.locs):
        if not loc.startswith(place.prefix) or "/." in loc:
            _location(st, batch, place, i, True)


def _each_match(
    st: EntryState,
    batch: Batch[R],
    rule: str,
    pattern: re.Pattern[str],
    message: Callable[[str, re.Match[str]], str],
) -> None:
    """``rule`` for each loc of the batch that ``pattern`` matches, worded by ``message``
    from the loc and the match."""
    for i, m in batch.matches(pattern):
        st.emit(rule, message(batch.locs[i], m), batch, i)


@CHECKED.decides("SM207")
def double_escaped(st: EntryState, batch: Batch[R]) -> None:
    """SM207: a decoded URL that still holds an entity or a %25XX escape."""
    blob = batch.blob
    if "&#" not in blob and "%25" not in blob and (";" not in blob or "&" not in blob):
        return
    _each_match(
        st,
        batch,
        "SM207",
        _DOUBLE_ESCAPED,
        lambda loc, m: (
            f"URL {clip(loc)!r} looks escaped twice ({m.group()!r} after decoding); "
            "escape once: & as &amp; in the XML, a space as %20 in the URL"
        ),
    )


@CHECKED.decides("SM208")
def fragment(st: EntryState, batch: Batch[Url]) -> None:
    """SM208: fragments identify the same document; servers never see them."""
    if "#" not in batch.blob:
        return
    _each_match(
        st,
        batch,
        "SM208",
        _HASH,
        lambda loc, _: (
            f"URL {clip(loc)!r} has a fragment ({clip(loc[loc.index('#') :], 30)!r}); "
            "list the URL without it"
        ),
    )


@CHECKED.decides("SM209")
def session_id(st: EntryState, batch: Batch[Url]) -> None:
    """SM209: session identifiers make every crawl see new URLs."""
    low = batch.blob.lower()
    if "sid" not in low and "session" not in low:
        return
    _each_match(
        st,
        batch,
        "SM209",
        _SESSION,
        lambda loc, m: (
            f"URL {clip(loc)!r} carries a session identifier ({m.group()!r}); "
            "list URLs without session state"
        ),
    )


@CHECKED.decides("SM218")
def long_url(st: EntryState, batch: Batch[Url]) -> None:
    """SM218: Yandex reads URLs of at most 1,024 characters."""
    if max(map(len, batch.locs)) <= 1024:
        return
    for i, loc in enumerate(batch.locs):
        if len(loc) > 1024:
            st.emit(
                "SM218",
                f"URL is {len(loc):,} characters long; Yandex ignores URLs over 1,024 characters",
                batch,
                i,
            )
