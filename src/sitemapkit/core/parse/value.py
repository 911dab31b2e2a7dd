"""core.parse: the values inside entries, read and checked the long way. Pure.

The readers of every kind use these for what the fast path does not take: the text of a
simple element, an absolute location (resolved against the base URL, with a finding), a W3C
Datetime (one grammar, :mod:`sitemapkit.core.w3cdate`), a number in its XSD lexical form,
the children of an extension element by name. Each reports what it refuses and returns
``None`` for it.
"""

from __future__ import annotations

import re
from typing import Final

from lxml import etree

from .. import limits
from ..finding import clip
from ..grammar import DECIMAL, INTEGER, SCHEME
from ..urls import iri_to_uri, resolve
from ..w3cdate import GRAMMAR, USABLE, format_lastmod, parse_usable, zulu
from .canonical import XML_SPACE
from .document import Document
from .tree import split, tag_of

__all__ = [
    "Fields",
    "absolute",
    "date",
    "fields",
    "lexical",
    "loc_rule",
    "optional",
    "peek",
    "value",
]

#: Children of an extension element by local name: (text, line, element).
Fields = dict[str, tuple[str | None, int | None, etree._Element]]

# XSD lexical forms: the model is lenient (Python's Decimal and int accept 5e-1, 1_000,
# NaN), the schemas are not. sitemaps.org <priority>: "Valid values range from 0.0 to 1.0".
_LEXICAL: Final = {
    "priority": (DECIMAL, "a decimal number such as 0.5", "SM402"),
    "rating": (DECIMAL, "a decimal number such as 4.2", "VID705"),
    "duration": (INTEGER, "a whole number of seconds", "VID704"),
    "view_count": (INTEGER, "a whole number", "VID716"),
}
LEXICAL_NAMES: Final = frozenset(_LEXICAL)
# Not relative references but absolute URLs written wrongly: "https//x", "www.x.com/".
_MALFORMED_ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*//|www\.", re.IGNORECASE)


def loc_rule(text: str) -> str:
    """The SM2xx rule a location the model refused breaks."""
    m = SCHEME.match(text)
    if m is None:
        return "SM201"
    rest = text[m.end() :]
    if m.group()[:-1].lower() not in ("http", "https") or not rest.startswith("//"):
        return "SM202"
    if rest[2:3] in ("", "/", "?", "#"):
        return "SM201"
    try:
        uri = iri_to_uri(text)
    except ValueError:
        return "SM204"
    if not limits.MIN_LOC_LENGTH <= len(uri) <= limits.MAX_LOC_LENGTH:
        return "SM203"
    return "SM204"


def value(doc: Document, el: etree._Element, loc: str | None) -> str | None:
    """The stripped text of a simple element, or None if it holds markup (reported)."""
    if len(el) == 0:
        text = el.text
        return "" if text is None else text.strip(XML_SPACE)
    name = split(tag_of(el))[1]
    for child in el:
        if isinstance(child, etree._Entity):
            if not all(isinstance(c, etree._Entity) for c in el):
                break  # markup too: SM107 below
            # The text around the entities is what the document says without them.
            text = ((el.text or "") + "".join(c.tail or "" for c in el)).strip(XML_SPACE)
            doc.judge(
                "SM011",
                f"<{name}> uses the entity {child.text}, which is never expanded; "
                + (f"read as {clip(text)!r} without it" if text else "the value was ignored"),
                el,
                loc,
                lost=True,
            )
            return text or None
    doc.judge(
        "SM107", f"<{name}> must hold text only, not elements; the value was ignored", el, loc
    )
    return None


def peek(el: etree._Element, tag: str) -> str | None:
    """The stripped text of the first ``tag`` child, unchecked (to name an entry)."""
    for child in el:
        if child.tag == tag:
            text = child.text
            return text.strip(XML_SPACE) if text else None
    return None


def absolute(
    doc: Document,
    text: str,
    line: int | None,
    raw: str | None,
    what: str,
    at: etree._Element | None = None,
) -> str | None:
    """An absolute location for ``text`` (resolved against base_url), or None.

    sitemaps.org <loc>: "This URL must begin with the protocol (such as http)".
    """
    if SCHEME.match(text):
        return text
    add = doc.findings.add
    if _MALFORMED_ABSOLUTE.match(text):
        add(
            "SM201" if text[:4].lower() == "www." else "SM202",
            f"<{what}> {clip(text)!r} is a malformed absolute URL; write it as "
            "https://host/path. Entry skipped",
            line=line,
            loc=raw,
            at=at,
        )
        return None
    if doc.settings.base_url is None:
        add(
            "SM201",
            f"<{what}> {clip(text)!r} is relative and there is no base URL "
            "to resolve it; sitemaps must list absolute URLs. Entry skipped",
            line=line,
            loc=raw,
            at=at,
        )
        return None
    resolved = resolve(text, doc.settings.base_url)
    add(
        "SM201",
        f"<{what}> {clip(text)!r} is relative; resolved to "
        f"{clip(resolved)!r}. Sitemaps must list absolute URLs",
        line=line,
        loc=raw,
        at=at,
        # the entry is kept: a warning, unless strict reading refuses what it had to guess
        severity="error" if doc.settings.strict else "warning",
    )
    return resolved


def date(
    doc: Document,
    text: str,
    what: str,
    line: int | None,
    raw: str | None,
    rule: str | None = None,
    at: etree._Element | None = None,
    *,
    keep: bool | None = None,
) -> str | None:
    """The date ``text`` says, kept as the document wrote it, or None when it is not a date
    (reported as ``rule``, by default SM301 for the syntax and SM304 for the calendar).

    Every W3C Datetime is kept, fraction and all (``Z`` written ``+00:00``); one coarser
    than a day with SM302, an ISO 8601 form off the Note (``w3cdate.USABLE``) with SM301
    (or ``rule``), warnings when reading. Strict reading (the writer's inputs) refuses both
    and gives ``format_lastmod``'s form; ``keep=False`` (the default with a ``rule``: news
    and video dates, which the model holds) drops both, as errors.
    """
    add = doc.findings.add
    if not text:
        add("SM111", f"Empty <{what}>; it was ignored", line=line, loc=raw, at=at, lost=False)
        return None
    w3c = GRAMMAR.fullmatch(text) is not None
    if not w3c and USABLE.fullmatch(text) is None:
        add(
            rule or "SM301",
            f"Invalid <{what}> {clip(text)!r}: not a date; "
            "use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm. The value was ignored",
            line=line,
            loc=raw,
            at=at,
            lost=True,
        )
        return None
    try:
        parsed = parse_usable(text)
    except ValueError as exc:
        add(
            rule or "SM304",
            f"Invalid <{what}>: {exc}. The value was ignored",
            line=line,
            loc=raw,
            at=at,
            lost=True,
        )
        return None
    strict = doc.settings.strict
    # a news, video or feed date lives in a model object of the writer's forms only: there,
    # what the writer could not emit is dropped (the model would refuse it)
    dropped = not (rule is None if keep is None else keep) and (not w3c or parsed.granularity < 3)
    if not w3c:
        add(
            rule or "SM301",
            f"<{what}> {text!r} is not a W3C Datetime; write it as YYYY-MM-DD or "
            "YYYY-MM-DDThh:mm:ss+hh:mm (T and Z in capitals, a zone after every time). "
            + ("The value was ignored" if dropped else "The value was kept as written"),
            line=line,
            loc=raw,
            at=at,
            lost=dropped,
        )
    elif parsed.granularity < 3:
        add(
            "SM302",
            f"<{what}> {text!r} is coarser than a day; give at least YYYY-MM-DD. "
            + ("The value was ignored" if dropped else "The value was kept as written"),
            line=line,
            loc=raw,
            at=at,
            # strict reading feeds the writer, which cannot emit it (the XSD refuses it)
            severity="error" if strict or dropped else None,
            lost=dropped,
        )
    if dropped:
        return None
    if strict:
        return format_lastmod(text)
    return zulu(text) if w3c else text


def lexical(
    doc: Document,
    name: str,
    text: str,
    line: int | None,
    raw: str | None,
    prefix: str = "",
    at: etree._Element | None = None,
) -> str | None:
    """``text`` if it has the XSD lexical form of field ``name``, else None (reported)."""
    pattern, form, rule = _LEXICAL[name]
    if pattern.fullmatch(text):
        return text
    doc.findings.add(
        rule,
        f"Invalid <{prefix}{name}> {clip(text)!r}: not {form}. The value was ignored",
        line=line,
        loc=raw,
        at=at,
    )
    return None


def fields(
    doc: Document,
    el: etree._Element,
    ns: str,
    known: frozenset[str],
    what: str,
    rule: str,
    raw: str | None,
    multi: frozenset[str] = frozenset(),
    containers: frozenset[str] = frozenset(),
) -> tuple[Fields, list[tuple[str | None, int | None, etree._Element]]]:
    """Children of an extension element by local name, with their text (None for
    ``containers``, elements with element children); repeats of ``multi`` listed."""
    add = doc.findings.add
    found: Fields = {}
    repeated: list[tuple[str | None, int | None, etree._Element]] = []
    for child in el:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        cns, local = split(tag)
        line = doc.line(child)
        if cns != ns or (local not in known and local not in multi):
            add(
                rule,
                f"Unexpected <{local}> in <{what}>; it was ignored",
                line=line,
                loc=raw,
                at=child,
            )
        elif local in multi:
            repeated.append((value(doc, child, raw), line, child))
        elif local in found:
            add(
                rule,
                f"<{what}> has more than one <{local}>; the first one was used",
                line=line,
                loc=raw,
                at=child,
            )
        else:
            found[local] = (None if local in containers else value(doc, child, raw), line, child)
    return found, repeated


def optional(doc: Document, found: Fields, name: str, what: str, raw: str | None) -> str | None:
    """The text of an optional child, None when absent or empty (reported)."""
    item = found.get(name)
    if item is None or item[0] is None:
        return None
    if not item[0]:
        doc.findings.add(
            "SM111",
            f"Empty <{what}:{name}>; it was ignored",
            line=item[1],
            loc=raw,
            at=item[2],
            severity="warning",  # an empty optional value is dropped, the entry is kept
        )
        return None
    return item[0]
