"""core: the lexical patterns the protocol's values share, written once. Pure.

The reader, the checks and the writer's fast paths recognise the same tokens; each pattern
here is the one they all use (dates have their own grammar in :mod:`.w3cdate`).
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal
from typing import Final

__all__ = ["APP_LINK", "DECIMAL", "INTEGER", "PRIORITY_TEXTS", "SCHEME", "decimal_text"]

#: A URI scheme and its colon (RFC 3986 §3.1: ``ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )``).
SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

#: An ``xsd:decimal`` lexical value (XSD 1.0 Part 2 §3.2.3), as ``<priority>`` holds.
DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")

#: An ``xsd:integer`` lexical value (XSD 1.0 Part 2 §3.3.13).
INTEGER: Final = re.compile(r"[+-]?[0-9]+")

#: The priorities in the form the protocol shows ("0.0" to "1.0", one decimal): "Valid
#: values range from 0.0 to 1.0" (sitemaps.org); :func:`decimal_text` writes each of
#: them as it is (the writer's fast path takes only these).
PRIORITY_TEXTS: Final = frozenset(f"{i / 10:.1f}" for i in range(11))

#: An app deep link, the ``href`` of ``<xhtml:link rel="alternate">`` without hreflang in
#: Google's App Indexing (``android-app://package/scheme/host/path``, ``ios-app://``): a URI
#: of another scheme than http(s), one token.
APP_LINK: Final = re.compile(
    r"(?!https?:)[a-z][a-z0-9+.-]*://[^\s\x00-\x1f\x7f]{1,2000}", re.ASCII | re.IGNORECASE
)


@functools.lru_cache(maxsize=4096)  # few distinct values in practice, written per entry
def decimal_text(number: float) -> str:
    """The shortest ``xsd:decimal`` text of ``number`` with at least one digit after the
    point and never an exponent: the one way the writer writes a priority or a rating.

    >>> decimal_text(0.85), decimal_text(1.0), decimal_text(0.5), decimal_text(1e-7)
    ('0.85', '1.0', '0.5', '0.0000001')
    """
    text = repr(float(number))  # the shortest text that reads back as the same float
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    if "." not in text:
        text += ".0"
    return text
