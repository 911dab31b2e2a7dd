"""lint: which function decides each rule id, recorded where the function is written. Pure.

The catalogue test (tests/lint/test_rules.py) proves that every rule of ``spec/RULES.md``
the catalogue says is checked has a decider, and that no decider claims an unknown id. The
checks (:mod:`sitemapkit.lint.checks`) and the online checks (:mod:`sitemapkit.lint.online`)
each keep one :class:`Deciders` table and mark their functions with its :meth:`~Deciders.decides`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Deciders"]

_F = TypeVar("_F", bound=Callable[..., Any])


class Deciders(dict[str, tuple[str, ...]]):
    """Rule id → the qualified names of the functions that decide it (a rule may be
    decided in two halves, e.g. per file and across the set).

    >>> table = Deciders()
    >>> @table.decides("SM999")
    ... def check() -> None: ...
    >>> table["SM999"][0].endswith("check")
    True
    """

    def decides(self, *ids: str) -> Callable[[_F], _F]:
        """Mark a function as deciding the rules ``ids``."""

        def register(fn: _F) -> _F:
            name = f"{fn.__module__}.{fn.__qualname__}"
            for rule in ids:
                self[rule] = (*self.get(rule, ()), name)
            return fn

        return register
