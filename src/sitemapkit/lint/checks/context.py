"""lint.checks: what every check may know beyond the document, and the table of who
decides which rule. Pure.

:class:`Context` carries the sitemap's URL, "now", the waivers and strict mode, all injected
by the driver (nothing here reads the clock). :data:`CHECKED` is filled by the
``@CHECKED.decides(...)`` marks on the checks of the sibling modules; severities are never
decided here but by :func:`sitemapkit.core.rules.severity`. Decides no rule itself.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Final

from ..registry import Deciders

__all__ = ["CHECKED", "Context"]

#: Rule id → the checks that decide it (for the catalogue test).
CHECKED: Final = Deciders()


@dataclass(frozen=True, slots=True)
class Context:
    """What checks may know beyond the document; all of it injected.

    ``url`` is the sitemap's own URL (where it is or will be published): the location rules
    SM210-SM213, SM504, SM505 need it and are skipped without it. ``now`` (aware) enables
    the date heuristics; ``modified`` is the file's modification time (SM306). ``allow``
    waives the location rules (SM214) for hosts (``example.org``) or origins
    (``https://example.org:8443``). ``strict`` promotes the rules marked strict→error.
    """

    url: str | None = None
    now: dt.datetime | None = None
    modified: dt.datetime | None = None
    allow: tuple[str, ...] = ()
    strict: bool = False
    future_tolerance: dt.timedelta = dt.timedelta(hours=24)
