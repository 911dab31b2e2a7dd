"""lint: the rule catalogue, as :mod:`sitemapkit.core.rules` holds it (one table for all).

The catalogue is pure data that the reader in ``core`` needs too, so it lives in ``core``;
this module keeps the name the validator and its users import.
"""

from __future__ import annotations

from ..core.rules import RULES, Rule, Where, expand_ids, severity

__all__ = ["RULES", "Rule", "Where", "expand_ids", "severity"]
