"""Names a package imports on first use, so that importing it (and starting the command line,
or a child process that needs one of its modules) stays cheap.

A package maps each name to the module that defines it and takes its module-level
``__getattr__`` (PEP 562) from :func:`names`; its ``TYPE_CHECKING`` imports tell type checkers
the same.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["names"]


def names(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``where`` maps a name to its module (relative to
    ``package``). A name is imported once, then kept in the package.

    >>> getattr_ = names("sitemapkit", {"clip": ".core.finding"})
    >>> getattr_("clip")("abcdef", 4)
    'abc…'
    """

    def load(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    return load
