"""validation: one document's findings from its passes — severities, dedupe, caps.

Pure. The reader and the tree pass report much the same problems: the reader's findings
win, then the structural checks', then the schema's; repeats are recognised on the
structured fields (rule, entry loc, line), never on message text. Then the findings of
rules not selected go, and each rule keeps its first ``max_findings`` of the document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from ..core.finding import Finding, Severity
from ..core.rules import RULES, severity
from ..lint.tree import Scan, dedupe, is_misbound, place

__all__ = ["Capped", "cap", "merge_passes", "reader_findings", "unlisted"]

#: Rules the reader reports at another severity than the catalogue's, for reading: a
#: relative loc it could resolve (SM201) is a warning there, a too-long video title
#: (VID703) drops the video, an error there. Validation reports the catalogue's.
_READER_OWN: Final = frozenset({"SM201", "VID703"})


def reader_findings(findings: list[Finding], *, strict: bool) -> list[Finding]:
    """The reader's findings with the validator's severities: the catalogue's for the
    rules the reader sets its own way (``_READER_OWN``), and ``--strict`` promotes the
    strict rules; otherwise the reader's (it lowers some findings on purpose, such as an
    unknown namespace, SM107, to a warning)."""
    out = []
    for f in findings:
        sev: Severity = f.severity
        if f.rule in _READER_OWN:
            sev = severity(f.rule, strict=strict)
        elif strict and RULES[f.rule].strict:
            sev = severity(f.rule, strict=True)
        out.append(f if sev == f.severity else replace(f, severity=sev))
    return out


def merge_passes(
    reader: list[Finding], scan: Scan, *, extra: list[Finding], strict: bool
) -> list[Finding]:
    """The reader's findings (with the validator's severities), the ``extra`` file checks
    and the tree pass's findings that are not repeats; an SM107 "unknown namespace"
    warning is dropped where an SM102 names that namespace (the reader's SM102 sits on the
    first element of the namespace; the tree pass records where the first elements of the
    namespaces its SM102 names are)."""
    own = reader_findings(reader, strict=strict) + extra
    named = {place(f) for f in own if f.rule == "SM102"} - scan.crowded
    own += dedupe(scan.findings, own, named)
    misbound = named | scan.misbound
    if not misbound or not any(f.rule == "SM102" for f in own):
        return own
    return [f for f in own if not is_misbound(f, misbound)]


def unlisted(
    tree: Mapping[str, int], reader: Mapping[str, int], active: set[str] | None
) -> dict[str, int]:
    """Findings the passes did not keep, per rule. When both passes stopped keeping a
    rule, they are taken to be the same ones (the kept ones were deduped)."""
    out = dict(tree)
    for rule, n in reader.items():
        out[rule] = max(n, out.get(rule, 0))
    if active is not None:
        out = {rule: n for rule, n in out.items() if rule in active}
    return out


@dataclass(slots=True)
class Capped:
    """The findings listed, and what was left out: counts per rule and the notes."""

    kept: list[Finding]
    omitted: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def cap(
    own: list[Finding], *, where: str, unlisted: Mapping[str, int], max_findings: int, keep: int
) -> Capped:
    """The first ``max_findings`` findings of each rule in this document (by line; 0:
    all); the others, and the ``unlisted`` ones (not kept by a pass, which keeps ``keep``
    of a rule), are counted and noted."""
    counts: dict[str, int] = {}
    out = Capped([])
    for f in sorted(own, key=lambda f: f.line or 0):
        n = counts[f.rule] = counts.get(f.rule, 0) + 1
        if not max_findings or n <= max_findings:
            out.kept.append(f)
    for rule in [*counts, *(r for r in unlisted if r not in counts)]:
        n = counts.get(rule, 0)
        over = bool(max_findings) and n > max_findings
        omitted = (n - max_findings if over else 0) + unlisted.get(rule, 0)
        if not omitted:
            continue
        out.omitted[rule] = omitted
        why = (
            f"at most {max_findings:,} per rule and document: max_findings, --max-findings"
            if over
            else f"each pass keeps at most {keep:,} per rule and document"
        )
        out.notes.append(f"{where}: {omitted:,} more {rule} findings are not listed ({why})")
    return out
