"""core.parse: the findings of one document: severities, the cap per rule, strict mode. Pure.

Every reader reports through :meth:`Findings.add`. A rule's severity is the catalogue's
(:func:`sitemapkit.core.rules.severity`); a reader that needs another one for its context says
so at the call site. A hostile document can hold millions of bad entries, so each rule lists
its first ``cap`` findings and counts the rest. In strict mode the first error-severity finding
raises :class:`~sitemapkit.errors.ParseError` instead of being only recorded.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

from ...errors import ParseError, UnsafeXMLError
from ..finding import Finding, Severity
from ..rules import severity as catalogue_severity
from .settings import ParseSettings

__all__ = ["REPORTED", "Findings", "element_path"]

#: The rules this reader reports (spec/RULES.md "checked by parse"); tests/core/test_parse.py
#: checks it against the rule ids written in this package, tests/lint/test_rules.py against
#: the catalogue.
# fmt: off
REPORTED: Final = frozenset((
    "SM001", "SM002", "SM003", "SM004", "SM005", "SM006", "SM007", "SM008",
    "SM009", "SM010", "SM011", "SM101", "SM102", "SM103", "SM104", "SM106",
    "SM107", "SM110", "SM111", "SM201", "SM202", "SM203", "SM204", "SM301",
    "SM302", "SM304", "SM401", "SM402", "SM501", "SM503",
    "IMG601", "IMG602", "IMG603", "IMG605",
    "VID701", "VID702", "VID703", "VID704", "VID705", "VID707", "VID708", "VID709",
    "VID710", "VID712", "VID713", "VID714", "VID715", "VID716", "VID717",
    "NEWS801", "NEWS802", "NEWS803", "NEWS804", "NEWS805", "NEWS807", "NEWS808",
    "HRE901", "HRE902", "HRE903",
))
# fmt: on

#: Keys :meth:`Findings.once` remembers (one per unknown namespace, at most): beyond them a
#: document of random namespaces is not worth a finding each.
_MAX_ONCE: Final = 100


class Findings:
    """The findings of one document, in the order they were made (``items``)."""

    __slots__ = ("_counts", "_ordinals", "_seen", "_unlisted_errors", "items", "settings")

    def __init__(self, settings: ParseSettings) -> None:
        #: ``source`` names the document; ``max_findings`` findings are listed per rule (0: all).
        self.settings = settings
        self.items: list[Finding] = []
        self._counts: dict[str, int] = {}
        self._seen: set[str] = set()
        #: Rules with an error among their unlisted findings: their summary is one too.
        self._unlisted_errors: set[str] = set()
        self._ordinals = Ordinals()

    def add(
        self,
        rule: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        loc: str | None = None,
        at: etree._Element | None = None,
        attr: str | None = None,
        severity: Severity | None = None,
        fatal: bool | None = None,
        lost: bool | None = None,
    ) -> None:
        """Record a finding of ``rule``; raise when it is ``fatal`` (by default: an error in
        strict mode). ``at`` is the element the finding judges (``attr``: its attribute),
        named in the finding by its path inside the entry (:func:`element_path`).

        ``severity`` is the validator's (by default the catalogue's); ``lost`` says whether
        the reader dropped something (an entry, a value, the rest of the document) and is
        by default whether that severity is an error. When reading (not strict), the
        finding is an error exactly when something was lost."""
        sev = self._severity(rule, severity, lost)
        settings = self.settings
        cap = settings.max_findings
        n = self._counts[rule] = self._counts.get(rule, 0) + 1
        if not cap or n <= cap:
            element = None if at is None else element_path(at, attr, self._ordinals)
            self.items.append(
                Finding(rule, sev, message, settings.source, line, column, loc, element)
            )
        elif sev == "error":
            self._unlisted_errors.add(rule)
        if fatal if fatal is not None else (settings.strict and sev == "error"):
            cls = UnsafeXMLError if rule == "SM011" else ParseError
            raise cls(f"{message} [{rule}]", where=settings.source, line=line, column=column)

    def _severity(self, rule: str, severity: Severity | None, lost: bool | None) -> Severity:
        sev = severity or catalogue_severity(rule)
        settings = self.settings
        if settings.purpose == "read" and not settings.strict and lost is not None:
            sev = "error" if lost else "warning"
        return sev

    def full(self, rule: str) -> bool:
        """Whether a finding of ``rule`` added now would only be counted, not listed (its
        cap is reached, and it would not raise: not strict)."""
        cap = self.settings.max_findings
        return bool(cap) and not self.settings.strict and self._counts.get(rule, 0) >= cap

    def count(self, rule: str, n: int, *, lost: bool | None = None) -> None:
        """Count ``n`` findings of ``rule`` past its cap (see :meth:`full`) at once: what
        ``n`` calls of :meth:`add` would record, without making their messages."""
        assert self.full(rule)
        self._counts[rule] += n
        if n and self._severity(rule, None, lost) == "error":
            self._unlisted_errors.add(rule)

    def once(self, key: str) -> bool:
        """True the first time ``key`` is seen (caps repeated per-document findings)."""
        if key in self._seen or len(self._seen) >= _MAX_ONCE:
            return False
        self._seen.add(key)
        return True

    @property
    def unlisted(self) -> dict[str, int]:
        """Findings per rule beyond the cap, not in ``items``."""
        cap = self.settings.max_findings
        return {r: n - cap for r, n in self._counts.items() if cap and n > cap}

    def summarize(self) -> None:
        """Count the unlisted findings of each rule in one last finding of that rule: an
        error when one of them is (when reading, a kept value's findings are warnings
        however many), else a warning."""
        cap = self.settings.max_findings
        for rule, n in self.unlisted.items():
            self.items.append(
                Finding(
                    rule,
                    "error" if rule in self._unlisted_errors else "warning",
                    f"{n:,} more {rule} findings in this document are not listed "
                    f"(at most {cap:,} per rule)",
                    self.settings.source,
                )
            )


def element_path(
    el: etree._Element, attr: str | None = None, ordinals: Ordinals | None = None
) -> str | None:
    """The path of ``el`` inside its entry (the child of the root element that holds it),
    as :attr:`Finding.element` names it: ``image:image[2]/image:caption``, with ``/@attr``
    for an attribute. Each step's index counts the siblings of the same local name before
    it in document order (kept or not); None for the entry itself or what lies outside.
    Built only when a finding is made; ``ordinals`` (one per document) counts each
    parent's children once, however many findings they have.
    """
    steps: list[str] = []
    node: etree._Element | None = el
    while node is not None:
        parent = node.getparent()
        if parent is None or parent.getparent() is None:
            break  # node is the root element or an entry
        tag = node.tag
        if not isinstance(tag, str):
            return None
        local = tag.rpartition("}")[2]
        n = ordinals.of(parent, node, local) if ordinals is not None else _ordinal(node, local)
        name = f"{node.prefix}:{local}" if node.prefix else local
        steps.append(name if n == 1 else f"{name}[{n}]")
        node = parent
    if not steps:
        return None
    path = "/".join(reversed(steps))
    return f"{path}/@{attr}" if attr is not None else path


def _ordinal(node: etree._Element, local: str) -> int:
    """1 + the siblings called ``local`` (in any namespace) before ``node``."""
    return 1 + sum(1 for _ in node.itersiblings("{*}" + local, preceding=True))


class Ordinals:
    """The ordinals of a parent's children by local name, counted forward, once.

    Counting an element's preceding siblings for each finding made an entry of 50,000
    repeated children with a finding each quadratic (two minutes). The parents (a path's
    few levels: at most :data:`_PARENTS` are remembered) and the children counted are
    held, so their proxies, and ``id()``s, stay the same.
    """

    __slots__ = ("_parents",)

    def __init__(self) -> None:
        self._parents: dict[int, _Children] = {}

    def of(self, parent: etree._Element, node: etree._Element, local: str) -> int:
        """``node``'s ordinal among ``parent``'s children called ``local``."""
        children = self._parents.get(id(parent))
        if children is None or children.parent is not parent:
            if len(self._parents) >= _PARENTS:
                self._parents.clear()
            children = self._parents[id(parent)] = _Children(parent)
        return children.of(node, local)


_PARENTS: Final = 16


class _Children:
    __slots__ = ("counts", "kids", "known", "parent")

    def __init__(self, parent: etree._Element) -> None:
        self.parent = parent
        self.kids: list[etree._Element] = []
        self.known: dict[int, int] = {}
        self.counts: dict[str, int] = {}

    def of(self, node: etree._Element, local: str) -> int:
        found = self.known.get(id(node))
        if found is not None:
            return found
        following = self.kids[-1].itersiblings() if self.kids else self.parent.iterchildren()
        for kid in following:
            tag = kid.tag
            if isinstance(tag, str):
                name = tag.rpartition("}")[2]
                n = self.counts[name] = self.counts.get(name, 0) + 1
                self.kids.append(kid)
                self.known[id(kid)] = n
                if kid is node:
                    return n
        return _ordinal(node, local)  # not after those counted: the tree was changed
