"""core: the one set of lxml parser options for documents from anywhere. Pure.

The parser's push parser and the schema validator's parser both take :data:`HARDENED`, so a
document the one refuses (an entity, a DTD, a network fetch, a tree past libxml2's default
size and depth limits) the other refuses too.
"""

from __future__ import annotations

from typing import Final, TypedDict

__all__ = ["HARDENED", "Hardened"]


class Hardened(TypedDict):
    """The keyword options of an lxml parser that :data:`HARDENED` sets."""

    resolve_entities: bool
    no_network: bool
    load_dtd: bool
    dtd_validation: bool
    huge_tree: bool


#: No entity expansion, no network, no DTD loaded or validated, libxml2's default limits.
HARDENED: Final[Hardened] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
}
