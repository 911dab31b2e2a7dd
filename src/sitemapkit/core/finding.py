"""core: a finding, the unit of everything tolerant reading and validation report. Pure.

Findings are data, not log lines (DESIGN §1.4): a rule id from ``spec/RULES.md``, a
severity, a message that says what is wrong and how to fix it, and where it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Finding", "Severity", "clip", "position"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a sitemap.

    ``rule`` is a rule id of ``spec/RULES.md`` (``"SM004"``, ``"VID714"`` …) and never
    changes meaning; ``severity`` is ``"error"`` (the entry or file is rejected by the
    protocol or by major engines) or ``"warning"``. ``where`` is the file name or URL,
    ``line`` and ``column`` are 1-based when known, ``loc`` is the ``<loc>`` of the
    entry the finding belongs to (``None`` for file-level findings). ``element`` is the
    path inside that entry of the element (or attribute) the finding judges, such as
    ``image:image[2]/image:caption`` or ``xhtml:link[@hreflang='en-UK']/@hreflang`` (see
    :func:`sitemapkit.lint.checks.position.element_path`), when a check knows it.

    >>> f = Finding("SM301", "error", "Invalid lastmod '2024/05/01'", "s.xml", 7)
    >>> str(f)
    "s.xml:7: SM301 error: Invalid lastmod '2024/05/01'"
    """

    rule: str
    severity: Severity
    message: str
    where: str | None = None
    line: int | None = None
    column: int | None = None
    loc: str | None = None
    element: str | None = None

    @property
    def position(self) -> str:
        """``FILE:LINE:COL`` with the unknown parts left out, or ``""``."""
        return position(self.where, self.line, self.column)

    def __str__(self) -> str:
        pos = self.position
        head = f"{pos}: " if pos else ""
        return f"{head}{self.rule} {self.severity}: {self.message}"


def position(where: str | None, line: int | None, column: int | None) -> str:
    """``FILE:LINE:COL`` with the unknown parts left out, or ``""``: the one way a finding
    and an error (:attr:`sitemapkit.SitemapError.position`) name a place.

    >>> position("s.xml", 7, None), position(None, None, None)
    ('s.xml:7', '')
    """
    return ":".join(str(p) for p in (where, line, column) if p is not None)


def clip(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, for quoting a value in a message.

    >>> clip("https://example.com/a-very-long-path", 20)
    'https://example.com…'
    """
    return text if len(text) <= width else text[: width - 1] + "…"
