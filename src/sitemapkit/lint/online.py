"""lint: what the online checks found, as rule ids and messages. Pure.

:mod:`sitemapkit.io.urlcheck` requests the URLs and records each answer as a
:class:`~sitemapkit.core.probe.Probe`; this module decides what is wrong with it:

* SM012 (:func:`sitemap_problems`): a sitemap's URL does not answer 200 after at most 5
  redirects, is disallowed by robots.txt, needs a login, or its site's robots.txt is
  unreachable (then RFC 9309 crawlers treat the whole site as disallowed);
* SM217 (:func:`entry_problems`, role ``loc``): a listed URL redirects, fails, is
  disallowed, is ``noindex`` or names another URL as canonical;
* HRE908 (role ``alternate``): an hreflang alternate redirects or is not canonical;
* VID719 (roles ``thumbnail_loc``, ``content_loc``, ``player_loc``): a video URL is
  disallowed by robots.txt or needs a login; VID718: the thumbnail's size is out of
  Google's bounds.

Each message says what is wrong, with the values, and how to fix it; the GSC label a
problem maps to is quoted where there is one (spec/RULES.md).
"""

from __future__ import annotations

import http
from typing import Final, Literal

from ..core.limits import MAX_THUMBNAIL, MIN_THUMBNAIL
from ..core.probe import Probe
from ..core.urls import normalize
from .registry import Deciders

__all__ = ["DECIDED", "Role", "entry_problems", "sitemap_problems"]

#: Which URL of an entry a probe is about: its ``<loc>``, an hreflang alternate's
#: ``href``, or one of a video's URLs.
Role = Literal["loc", "alternate", "thumbnail_loc", "content_loc", "player_loc"]

#: Rule id → the function here that decides it (the catalogue test checks every online
#: rule has one).
DECIDED: Final = Deciders()


def _status(status: int) -> str:
    """``HTTP 404 (Not Found)``; 401 and 403 say what they mean for a crawler."""
    if status == 401:
        return "HTTP 401 (login required)"
    if status == 403:
        return "HTTP 403 (forbidden: login required or crawlers refused)"
    try:
        return f"HTTP {status} ({http.HTTPStatus(status).phrase})"
    except ValueError:
        return f"HTTP {status}"


def _hops(probe: Probe) -> str:
    """``301 → 'https://…/b', 302 → 'https://…/a'``: the redirect chain as followed."""
    return ", ".join(f"{status} → {target!r}" for status, target in probe.redirects)


def _robots_block(probe: Probe, agent: str) -> str:
    where = repr(probe.robots.url) if probe.robots is not None else "robots.txt"
    return f"disallowed for {agent!r} by {where}"


def _robots_unreachable(probe: Probe) -> str | None:
    robots = probe.robots
    if robots is None or robots.state != "unreachable":
        return None
    return (
        f"{robots.url!r} answered {robots.describe()}; while robots.txt is unreachable, "
        "crawlers treat the whole site as disallowed (RFC 9309 §2.3.1.4) and do not fetch "
        "the sitemap ('Couldn't fetch'): make robots.txt answer 200, or 404 if there is none"
    )


@DECIDED.decides("SM012")
def sitemap_problems(probe: Probe, *, agent: str, published: bool) -> list[str]:
    """SM012 messages for a sitemap's URL (``published``: a local file's published copy,
    whose status is checked while the local bytes are validated)."""
    url = probe.url
    what = f"The published copy {url!r}" if published else f"The sitemap URL {url!r}"
    after = "; the local file was validated, but" if published else ";"
    out: list[str] = []
    unreachable = _robots_unreachable(probe)
    if unreachable is not None:
        out.append(unreachable)
    failure = probe.failure
    if failure == "blocked":
        out.append(
            f"{what} is {_robots_block(probe, agent)}{after} crawlers that obey robots.txt "
            "cannot fetch it ('Couldn't fetch'): allow it in robots.txt"
        )
    elif failure in ("loop", "too-many-redirects"):
        how = "in a loop" if failure == "loop" else "more than 5 times"
        out.append(
            f"{what} redirects {how} ({_hops(probe)}){after} crawlers give up "
            "('Couldn't fetch'): serve the sitemap at its URL or redirect once"
        )
    elif failure == "bad-redirect":
        out.append(
            f"{what} redirects to {probe.detail!r}, which is not an http(s) URL{after} "
            "crawlers cannot follow it ('Couldn't fetch')"
        )
    elif failure in ("timeout", "connection"):
        out.append(
            f"{what} could not be fetched: {probe.detail}{after} crawlers report "
            "'Couldn't fetch': check the server and the URL"
        )
    elif probe.status is not None and probe.status != 200:
        if probe.status in (401, 403):
            fix = "serve the sitemap without a login"
        elif published:
            fix = "publish the file there, or correct --published-at"
        else:
            fix = "make the URL answer 200 with the sitemap"
        out.append(
            f"{what} answers {_status(probe.status)}, not 200{after} crawlers get the "
            f"error ('HTTP error'): {fix}"
        )
    return out


def _label(role: Role, hreflang: str | None) -> str:
    if role == "alternate":
        return f"The hreflang {hreflang!r} alternate" if hreflang else "The alternate"
    return f"The video's <video:{role}>"


@DECIDED.decides("SM217", "HRE908", "VID718", "VID719")
def entry_problems(
    probe: Probe, *, role: Role, agent: str, hreflang: str | None = None
) -> list[tuple[str, str]]:
    """``(rule, message)`` for what a probe of one URL of an entry found."""
    if role == "loc":
        return [("SM217", m) for m in _page_problems(probe, agent)]
    if role == "alternate":
        return [("HRE908", m) for m in _alternate_problems(probe, _label(role, hreflang))]
    return _video_problems(probe, role, agent)


def _page_problems(probe: Probe, agent: str) -> list[str]:
    url = probe.url
    failure = probe.failure
    if failure == "blocked":
        return [
            f"{url!r} is {_robots_block(probe, agent)}; Google does not crawl it ('Sitemap "
            "contains URLs which are blocked by robots.txt'): remove it from the sitemap or "
            "allow it in robots.txt"
        ]
    if failure == "loop":
        return [
            f"{url!r} redirects in a loop ({_hops(probe)}); crawlers give up ('URLs not "
            "followed'): fix the redirects and list the page's final URL"
        ]
    if failure == "too-many-redirects":
        return [
            f"{url!r} redirects more than 5 times ({_hops(probe)}); crawlers give up ('URLs "
            "not followed'): list the page's final URL"
        ]
    if failure == "bad-redirect":
        return [
            f"{url!r} redirects to {probe.detail!r}, which is not an http(s) URL; crawlers "
            "cannot follow it: list the page's real URL"
        ]
    if failure == "timeout":
        return [
            f"{url!r} did not answer: {probe.detail}; crawlers report such URLs as not "
            "accessible ('URLs not accessible'): check the server (or raise --timeout)"
        ]
    if failure == "connection":
        return [
            f"{url!r} could not be requested: {probe.detail} ('URLs not accessible'): check "
            "the host name and the server"
        ]
    status = probe.status
    if status is None:
        return []
    final = probe.final_url or url
    out: list[str] = []
    if probe.redirects:
        count = len(probe.redirects)
        how = f"({probe.redirects[0][0]})" if count == 1 else f"{count} times ({_hops(probe)})"
        if status == 200:
            out.append(
                f"{url!r} redirects {how} to {final!r}; a sitemap lists final URLs: list "
                f"{final!r} instead"
            )
        else:
            out.append(
                f"{url!r} redirects {how} to {final!r}, which answers {_status(status)}; list "
                "only URLs that answer 200: fix the page or remove it from the sitemap"
            )
    elif status != 200:
        fix = (
            "serve the page without a login, or remove it from the sitemap"
            if status in (401, 403)
            else "fix the page or remove it from the sitemap"
        )
        out.append(f"{url!r} answers {_status(status)}, not 200 ('URLs not accessible'): {fix}")
    if status != 200:
        return out
    if probe.noindex is not None:
        out.append(
            f"{url!r} is marked noindex ({probe.noindex}); a sitemap lists the pages meant "
            "for the index: remove it from the sitemap or drop the noindex"
        )
    canonical = probe.canonical
    if canonical is not None and normalize(canonical) != normalize(final):
        out.append(
            f"{url!r} names {canonical!r} as its canonical URL ({probe.canonical_source}); "
            "a sitemap lists canonical URLs: list the canonical URL instead, or fix the "
            "canonical link"
        )
    return out


def _alternate_problems(probe: Probe, label: str) -> list[str]:
    url = probe.url
    if probe.failure in ("loop", "too-many-redirects"):
        how = "in a loop" if probe.failure == "loop" else "more than 5 times"
        return [
            f"{label} {url!r} redirects {how} ({_hops(probe)}); Google ignores hreflang "
            "annotations to URLs it cannot reach: list the page's final URL"
        ]
    if probe.failure is not None or probe.status is None:
        return []
    final = probe.final_url or url
    if probe.redirects:
        return [
            f"{label} {url!r} redirects ({probe.redirects[0][0]}) to {final!r}; alternates "
            f"must be final, canonical URLs: list {final!r}"
        ]
    canonical = probe.canonical
    if probe.status == 200 and canonical is not None and normalize(canonical) != normalize(final):
        return [
            f"{label} {url!r} names {canonical!r} as its canonical URL "
            f"({probe.canonical_source}); Google ignores hreflang annotations to "
            "non-canonical pages: list the canonical URL"
        ]
    return []


def _video_problems(probe: Probe, role: Role, agent: str) -> list[tuple[str, str]]:
    label = _label(role, None)
    url = probe.url
    if probe.failure == "blocked":
        return [
            (
                "VID719",
                f"{label} {url!r} is {_robots_block(probe, agent)}; Google cannot fetch it "
                "and may not show the video: allow it in robots.txt",
            )
        ]
    if probe.status in (401, 403):
        return [
            (
                "VID719",
                f"{label} {url!r} answers {_status(probe.status)}; Google cannot fetch it: "
                "serve it without a login",
            )
        ]
    image = probe.image
    if role != "thumbnail_loc" or image is None:
        return []
    (min_w, min_h), (max_w, max_h) = MIN_THUMBNAIL, MAX_THUMBNAIL
    if image.width < min_w or image.height < min_h:
        return [
            (
                "VID718",
                f"The video thumbnail {url!r} is {image}; Google requires at least "
                f"{min_w}×{min_h} px ('Thumbnail too small'): use a larger image",
            )
        ]
    if image.width > max_w or image.height > max_h:
        return [
            (
                "VID718",
                f"The video thumbnail {url!r} is {image}; Google accepts at most "
                f"{max_w}×{max_h} px ('Thumbnail too large'): scale it down",
            )
        ]
    return []
