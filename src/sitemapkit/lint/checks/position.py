"""lint.checks: naming a record by its loc, and finding its line in the document. Pure.

Records carry no positions, so entry findings wait as :class:`Pending` until the driver
resolves their lines from the document (:func:`resolve_lines`): a record is named by its
loc and how many records with the same loc came before it in the file. The ``(raw loc,
line)`` anchors of a parsed document (:func:`entry_anchors`) stand in for a tree no longer
held. Decides no rule.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from lxml import etree

from ...core.finding import Finding, Severity
from ...core.grammar import SCHEME
from ...core.urls import XML_SPACE, iri_to_uri, resolve

__all__ = ["Pending", "entry_anchors", "resolve_lines"]


@dataclass(slots=True)
class Pending:
    """An entry finding waiting for its line: the ``occurrence``-th record with ``loc``.

    ``see`` names another record whose line replaces ``{see}`` in the message.
    """

    rule: str
    severity: Severity
    message: str
    loc: str
    occurrence: int
    see: tuple[str, int] | None = None

    def finding(self, where: str | None, lines: dict[tuple[str, int], int]) -> Finding:
        message = self.message
        if self.see is not None:
            line = lines.get(self.see)
            message = message.replace("{see}", f"line {line}" if line else "earlier")
        return Finding(
            self.rule,
            self.severity,
            message,
            where,
            lines.get((self.loc, self.occurrence)),
            None,
            self.loc,
        )


def resolve_lines(
    wanted: Iterable[tuple[str, int]],
    *,
    root: etree._Element | None,
    data: bytes,
    kind: str | None,
    base_url: str | None = None,
    anchors: Iterable[tuple[str, int]] | None = None,
) -> dict[tuple[str, int], int]:
    """Lines of records named ``(loc, occurrence)``, found in the parsed document.

    A record's loc is the reader's (an IRI becomes a URI, a relative loc is resolved
    against ``base_url``), so a raw value that does not match as written is compared in
    that form too. ``anchors`` (the ``(raw loc, line)`` of every entry, in document
    order, as :func:`entry_anchors` gives them) stand in for a tree no longer held.
    """
    keys = set(wanted)
    if not keys:
        return {}
    locs = {loc for loc, _ in keys}
    found: dict[tuple[str, int], int] = {}
    seen: Counter[str] = Counter()
    for raw, line in anchors if anchors is not None else _anchors(root, data, kind):
        value = raw.strip(XML_SPACE)
        if value in locs:
            loc = value
        elif _CANONICAL_URI.fullmatch(value):
            continue  # the reader keeps it as it is, and it is not wanted
        else:
            mapped = _as_record_loc(value, base_url)
            if mapped is None or mapped not in locs:
                continue
            loc = mapped
        key = (loc, seen[loc])
        seen[loc] += 1
        if key in keys:
            found[key] = line
    return found


# A URI the reader's model keeps unchanged (lowercase scheme and host, nothing to encode).
_URI_CHARS: Final = r"[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=-]*+"  # possessive: no state a char
_CANONICAL_URI: Final = re.compile(
    r"https?://[a-z0-9.-]+(?::[0-9]{1,5})?"
    rf"(?:[/?#]{_URI_CHARS}(?:%[0-9A-Fa-f]{{2}}{_URI_CHARS})*+)?"
)


def _as_record_loc(value: str, base_url: str | None) -> str | None:
    text = value
    if not SCHEME.match(text):
        if base_url is None:
            return None
        text = resolve(text, base_url)
    try:
        return iri_to_uri(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=16)
def _first_locs(ns: str, entry: str) -> etree.XPath:
    """The first <loc> of each entry of a root element (an XPath runs in C)."""
    if not ns:
        return etree.XPath(f"./{entry}/loc[1]")
    return etree.XPath(f"./s:{entry}/s:loc[1]", namespaces={"s": ns})


def entry_anchors(root: etree._Element, kind: str | None) -> Iterable[tuple[str, int]]:
    """``(raw loc, line)`` of the entries of a parsed urlset or index, in document order."""
    return _anchors(root, b"", kind)


def _anchors(
    root: etree._Element | None, data: bytes, kind: str | None
) -> Iterable[tuple[str, int]]:
    """``(raw loc, line)`` of every entry, in document order."""
    if kind == "text" or root is None:
        if kind != "text":
            return
        for line, raw in enumerate(data.splitlines(), 1):
            text = raw.strip()
            if text:
                yield text.decode("utf-8", "replace"), line
        return
    if kind in ("urlset", "sitemapindex"):
        tag = str(root.tag)
        ns = tag[1 : tag.index("}")] if tag.startswith("{") else ""
        for loc in _first_locs(ns, "url" if kind == "urlset" else "sitemap")(root):
            assert isinstance(loc, etree._Element)
            if loc.text is not None:
                yield loc.text, loc.sourceline or 0
        return
    for el in root.iter(etree.Element):  # RSS <link>, Atom <link href>
        local = str(el.tag).rsplit("}", 1)[-1]
        if local != "link":
            continue
        value = el.get("href") if el.get("href") is not None else el.text
        if value:
            yield value, el.sourceline or 0
