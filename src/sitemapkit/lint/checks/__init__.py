"""lint: the checks the reader does not make, over records, raw documents and sets. Pure.

Nothing here opens a file, a socket or reads the clock: the driver passes bytes, parsed
trees, records and a :class:`Context` (the sitemap's URL, "now", the waivers). Three kinds
of checks, each small and marked with the rule ids it decides (:data:`CHECKED`):

* document checks (:func:`check_document`, :func:`check_compression`): over the
  uncompressed bytes, the parsed tree and the name;
* entry checks (:class:`FileChecks`): over the records of one document in batches, with
  file-level aggregates at the end;
* set checks (:class:`SetChecks`): over every document validated together.

Entry findings are :class:`Pending` until the driver resolves their lines
(:func:`resolve_places`). Where a rule is decided, by family:

========================  ==========================================================
``context``               :class:`Context`, the :data:`CHECKED` table (no rule)
``document``              SM008, SM009, SM102, SM109, SM112, SM204-SM206, SM403,
                          IMG603, VID717, HRE903 (bytes and tree)
``position``              :class:`Pending`, :func:`resolve_places` (no rule)
``state``                 the :class:`~.state.Batch` and state entry checks share
``entry``                 :class:`FileChecks`: the order of the entry checks (no rule)
``loc``                   SM207-SM213, SM218, SM504, SM505
``duplicate``             SM215, SM216, SM507
``date``                  SM305, SM307
``extension``             IMG604, IMG606, VID706, VID707, VID711, VID713, NEWS804,
                          NEWS806, NEWS809, HRE902, HRE904, HRE906, HRE907
``aggregate``             SM306, SM404, SM405, SM508 (file half)
``set``                   SM502, SM506, SM508, SM509, HRE905, HRE907 (across files)
``hashindex``             :class:`HashIndex`, the set's URL tables (no rule)
========================  ==========================================================
"""

from __future__ import annotations

from ...core.urls import normalize
from .context import CHECKED, Context
from .document import check_compression, check_document, may_have_padded_values
from .entry import FileChecks
from .hashindex import HashIndex
from .position import (
    Locator,
    Pending,
    element_path,
    entry_anchors,
    place_findings,
    resolve_places,
)
from .set import DocumentNode, SetChecks
from .state import AlternateEntry

__all__ = [
    "CHECKED",
    "AlternateEntry",
    "Context",
    "DocumentNode",
    "FileChecks",
    "HashIndex",
    "Locator",
    "Pending",
    "SetChecks",
    "check_compression",
    "check_document",
    "element_path",
    "entry_anchors",
    "may_have_padded_values",
    "normalize",
    "place_findings",
    "resolve_places",
]
