"""core.parse: the settings of one parse, built once from :class:`~.parser.SitemapParser`'s
keywords and read, never copied, by the shell, the findings and the readers. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ParseSettings", "Purpose"]

#: Whose severities the findings carry: ``"read"``: an error means something was lost (an
#: entry or a value dropped, the document not read whole), every other finding is a warning;
#: ``"validate"``: the catalogue's (spec/RULES.md).
Purpose = Literal["read", "validate"]


@dataclass(frozen=True, slots=True)
class ParseSettings:
    """What :class:`~.parser.SitemapParser` was given (its docstring says what each means)."""

    source: str | None
    base_url: str | None
    strict: bool
    max_bytes: int
    max_entries: int
    max_findings: int
    summarize: bool
    #: Take the fast paths (records built from values already canonical); off, every value
    #: goes through the model's checks. Both give the same records and findings.
    fast: bool
    #: Whose severities the findings carry (:data:`Purpose`).
    purpose: Purpose = "read"

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_entries < 1:
            raise ValueError("max_bytes and max_entries must be positive")
