"""core.parse: records built from values already in canonical form, the fast path. Pure.

Most entries of real sitemaps hold values exactly as the model would normalise them. For
those, a check at least as strict as the model's own (``urls.is_canonical_loc``, the
calendar-exact ``w3cdate.WRITER_FORM``, fractions of a second included, the changefreq
set, the eleven one-decimal priorities) proves the model would accept them unchanged, and
the record is built without checking again. (Other priorities, such as 0.85, are kept as
well, on the model's way: the validator's plain pass relies on the fast path taking only
values that no form rule such as SM403 finds fault with.) Anything else returns ``None``:
the caller takes the model's way, which decides and reports. ``tests/core/test_parse.py``
checks that both ways build equal records.
"""

from __future__ import annotations

from typing import Final

from ..grammar import PRIORITY_TEXTS
from ..model import CHANGEFREQS, Image, SitemapRef, Url
from ..trusted import trusted_image, trusted_ref, trusted_url
from ..urls import is_canonical_loc
from ..w3cdate import WRITER_FORM, zulu

__all__ = ["XML_SPACE", "fast_image", "fast_ref", "fast_url", "padded"]

# XML's white space (S production); str.strip() would also eat U+001C-U+001F, which the
# model refuses, and U+00A0, U+3000, which are data.
XML_SPACE: Final = " \t\r\n"
_PRIORITY: Final = {text: float(text) for text in PRIORITY_TEXTS}
_DATE: Final = WRITER_FORM.fullmatch


def fast_url(
    loc: str,
    lastmod: str | None,
    cf: str | None,
    pr: str | None,
    images: tuple[Image, ...] = (),
) -> Url | None:
    """The Url the model would build, when every value is already in canonical form (the
    ``images`` are checked ones), else ``None``."""
    loc = loc.strip(XML_SPACE)
    if not is_canonical_loc(loc):
        return None
    if lastmod is not None:
        lastmod = lastmod.strip(XML_SPACE)
        if _DATE(lastmod) is None:
            return None
        lastmod = zulu(lastmod)
    if cf is not None:
        cf = cf.strip(XML_SPACE)
        if cf not in CHANGEFREQS:
            return None
    priority = None
    if pr is not None:
        priority = _PRIORITY.get(pr.strip(XML_SPACE))
        if priority is None:
            return None
    return trusted_url(loc, lastmod, cf, priority, images)


def fast_ref(loc: str, lastmod: str | None) -> SitemapRef | None:
    """``fast_url`` for a ``<sitemap>`` entry of an index."""
    url = fast_url(loc, lastmod, None, None)
    # a built Url holds the normalised values: lastmod is a str
    return None if url is None else trusted_ref(url.loc, url.lastmod)  # type: ignore[arg-type]


def fast_image(loc: str) -> Image | None:
    """The Image of a canonical loc and nothing else (``loc`` already stripped)."""
    return trusted_image(loc) if loc and is_canonical_loc(loc) else None


def padded(*values: str | None) -> bool:
    """Whether a value starts or ends with XML white space (the fast path strips it)."""
    for value in values:  # noqa: SIM110 (any() of a generator costs a frame per entry)
        if value and (value[0] in XML_SPACE or value[-1] in XML_SPACE):
            return True
    return False
