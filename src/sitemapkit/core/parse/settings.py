"""core.parse: the settings of one parse, built once from :class:`~.parser.SitemapParser`'s
keywords and read, never copied, by the shell, the findings and the readers. Pure."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ParseSettings"]


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

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_entries < 1:
            raise ValueError("max_bytes and max_entries must be positive")
