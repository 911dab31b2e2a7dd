"""lint: the validation report and its renderings (text, JSON, JUnit XML, SARIF, GitHub). Pure.

A :class:`ValidationReport` is data: findings in document order per file, the documents
validated, the sitemaps that were not checked (and why), the targets that could not be
read. Each renderer turns it into a string; none of them writes anywhere or reads the
terminal (colour is a ``style`` function the caller passes, e.g. ``click.style`` on a TTY).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Final, Literal
from urllib.parse import quote, urljoin, urlsplit

from lxml import etree

from ..core.finding import Finding, Severity
from .rules import RULES

__all__ = [
    "RENDERERS",
    "FailOn",
    "ValidationReport",
    "help_uri",
    "plural",
    "render_github",
    "render_json",
    "render_junit",
    "render_sarif",
    "render_text",
    "rules_markdown",
    "sort_findings",
]

FailOn = Literal["error", "warning"]
Style = Callable[..., str]

_RANK: Final = {"warning": 1, "error": 2}
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_EXCERPT: Final = 100


@dataclass(slots=True)
class ValidationReport:
    """What validating one or more sitemaps found.

    ``findings`` are grouped by file (in the order ``files`` lists the documents) and in
    document order within a file. ``not_checked`` names sitemaps of the set that were
    not validated, with the reason (a child that is neither in the local build folder nor
    fetchable); ``unreadable`` the targets that could not be read at all. ``excerpts``
    holds the source line of each finding that has one, for the text report.

    >>> report = ValidationReport(files=["s.xml"], entries=1)
    >>> report.ok, report.summary()["errors"]
    (True, 0)
    """

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    entries: int = 0
    not_checked: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    excerpts: dict[tuple[str, int], str] = field(default_factory=dict, repr=False)
    #: Findings not listed, per rule: beyond the cap of findings per rule and file.
    omitted: dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """No error findings and every target read."""
        return not self.errors and not self.unreadable

    def failed(self, fail_on: FailOn = "error") -> bool:
        """True when a finding is at or above ``fail_on``."""
        rank = _RANK[fail_on]
        return any(_RANK[f.severity] >= rank for f in self.findings)

    def summary(self) -> dict[str, Any]:
        """Counts, per rule too, and what was not checked; the ``summary`` of the JSON."""
        by_rule = Counter(f.rule for f in self.findings)
        return {
            "files": len(self.files),
            "entries": self.entries,
            "errors": self.errors,
            "warnings": self.warnings,
            "rules": dict(sorted(by_rule.items())),
            "omitted": dict(sorted(self.omitted.items())),
            "not_checked": [{"sitemap": s, "reason": r} for s, r in self.not_checked],
            "unreadable": [{"target": t, "error": e} for t, e in self.unreadable],
            "notes": list(self.notes),
        }


def _by_file(report: ValidationReport) -> list[tuple[str | None, list[Finding]]]:
    groups: dict[str | None, list[Finding]] = {name: [] for name in report.files}
    for f in report.findings:
        groups.setdefault(f.where, []).append(f)
    return [(name, items) for name, items in groups.items() if items]


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural (``many``, by default ``word + "s"``) unless one.

    >>> plural(1, "sitemap"), plural(2, "entry", "entries")
    ('1 sitemap', '2 entries')
    """
    return f"{n:,} {word}" if n == 1 else f"{n:,} {many or word + 's'}"


def _excerpt(text: str, column: int | None) -> str:
    text = text.rstrip("\r\n").expandtabs(4)
    if len(text) <= _EXCERPT:
        return text
    start = 0 if column is None else max(0, column - 1 - _EXCERPT // 3)
    piece = text[start : start + _EXCERPT]
    return ("…" if start else "") + piece + ("…" if start + _EXCERPT < len(text) else "")


def _plain(text: str, **_: Any) -> str:
    return text


def render_text(report: ValidationReport, *, style: Style | None = None, **_: Any) -> str:
    """Findings grouped by file, each with its source line, then a summary.

    ``style`` is called like ``click.style(text, fg=..., bold=...)`` to colour the output.
    """
    st = style or _plain
    colours = {"error": "red", "warning": "yellow"}
    lines: list[str] = []
    for name, items in _by_file(report):
        lines.append(st(name or "<input>", bold=True))
        for f in items:
            pos = f"{f.line}:{f.column}" if f.line and f.column else f"{f.line}" if f.line else "-"
            sev = st(f"{f.severity:<7}", fg=colours[f.severity])
            lines.append(f"  {pos:>9}  {sev}  {st(f.rule, bold=True)}  {f.message}")
            source = report.excerpts.get((name or "", f.line or 0))
            if source is not None:
                lines.append(f"  {'':>9}  {st('|', dim=True)} {_excerpt(source, f.column)}")
        lines.append("")
    for sitemap, reason in report.not_checked:
        lines.append(f"note: not checked: {sitemap} ({reason})")
    for target, error in report.unreadable:
        lines.append(st(f"error: could not read {target}: {error}", fg="red"))
    for note in report.notes:
        lines.append(f"note: {note}")
    counts = [plural(report.errors, "error"), plural(report.warnings, "warning")]
    head = f"{plural(len(report.files), 'sitemap')}, {plural(report.entries, 'entry', 'entries')}"
    if not report.findings and not report.unreadable:
        verdict = st("no problems found", fg="green")
    else:
        verdict = ", ".join(counts)
        rules = Counter(f.rule for f in report.findings)
        if rules:
            verdict += " (" + ", ".join(f"{r} ×{n}" for r, n in sorted(rules.items())) + ")"
    tail = f"; {len(report.not_checked):,} not checked" if report.not_checked else ""
    if report.omitted:
        tail += f"; {sum(report.omitted.values()):,} more findings not listed"
    lines.append(f"{head}: {verdict}{tail}")
    return "\n".join(lines) + "\n"


def _finding_record(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "message": f.message,
        "file": f.where,
        "line": f.line,
        "column": f.column,
        "loc": f.loc,
    }


def render_json(report: ValidationReport, **_: Any) -> str:
    """``{"findings": [{rule, severity, message, file, line, column, loc}], "summary": …}``."""
    doc = {
        "findings": [_finding_record(f) for f in report.findings],
        "summary": report.summary(),
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def render_junit(report: ValidationReport, *, fail_on: FailOn = "error", **_: Any) -> str:
    """JUnit XML: a test suite per file, a test case per finding (failing at ``fail_on``).

    A file without findings is one passing test case; a target that could not be read is
    a test case with an ``<error>``; findings below ``fail_on`` pass, with their text in
    ``<system-out>``.
    """
    rank = _RANK[fail_on]
    root = etree.Element("testsuites", name="sitemapkit validate")
    total = failures = errors = 0
    groups = dict(_by_file(report))
    for name in [*report.files, *(n for n in groups if n not in report.files)]:
        items = groups.get(name, [])
        suite = etree.SubElement(root, "testsuite", name=_xml_text(name or "<input>"))
        failed = 0
        for f in items:
            case = etree.SubElement(
                suite,
                "testcase",
                classname=_xml_text(name or "<input>"),
                name=f"{f.rule} line {f.line}" if f.line else f.rule,
            )
            text = _xml_text(str(f))
            if _RANK[f.severity] >= rank:
                failure = etree.SubElement(
                    case, "failure", type=f"{f.rule} {f.severity}", message=_xml_text(f.message)
                )
                failure.text = text
                failed += 1
            else:
                etree.SubElement(case, "system-out").text = text
        if not items:
            etree.SubElement(suite, "testcase", classname=_xml_text(name or ""), name="valid")
        tests = max(len(items), 1)
        suite.set("tests", str(tests))
        suite.set("failures", str(failed))
        suite.set("errors", "0")
        total += tests
        failures += failed
    for target, error in report.unreadable:
        suite = etree.SubElement(
            root, "testsuite", name=_xml_text(target), tests="1", failures="0", errors="1"
        )
        case = etree.SubElement(suite, "testcase", classname=_xml_text(target), name="read")
        etree.SubElement(case, "error", message=_xml_text(error)).text = _xml_text(error)
        total += 1
        errors += 1
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    body = etree.tostring(root, encoding="unicode", pretty_print=True)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body


def _artifact_uri(where: str | None) -> str:
    if not where:
        return "stdin"
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", where):
        return where
    path = PurePath(where)
    if path.is_absolute():
        return "file://" + quote(path.as_posix())
    return quote(path.as_posix())


#: The rules page, relative to the repository's root (generated by :func:`rules_markdown`).
RULES_PAGE: Final = "docs/rules.md"


def help_uri(rule_id: str, repository: str | None = None) -> str:
    """Where a rule is explained: its anchor on the rules page (``docs/rules.md#sm301``).

    With ``repository`` (the project's repository URL) the reference is resolved against
    it: on GitHub to the page as the default branch shows it (``…/blob/HEAD/docs/…``),
    elsewhere against the URL as a folder. Without, it stays relative to the
    repository's root, where the page lives.

    >>> help_uri("SM301", "https://github.com/o/sitemapkit")
    'https://github.com/o/sitemapkit/blob/HEAD/docs/rules.md#sm301'
    """
    ref = f"{RULES_PAGE}#{rule_id.lower()}"
    if not repository:
        return ref
    base = repository.rstrip("/") + "/"
    if urlsplit(base).hostname == "github.com":
        base += "blob/HEAD/"
    return urljoin(base, ref)


def _md(text: str) -> str:
    """Catalogue text as Markdown: tags such as ``<urlset>`` shown, not read as HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def rules_markdown() -> str:
    """``docs/rules.md``: every rule of the catalogue under its own anchor (``#sm301``).

    ``tests/lint/test_rules_page.py`` checks that the page in the repository is exactly
    this text; regenerate it with ``python -m sitemapkit.lint.report > docs/rules.md``.
    """
    lines = [
        "# Rules",
        "",
        "<!-- Generated from src/sitemapkit/core/rules.py by "
        "`python -m sitemapkit.lint.report > docs/rules.md`; a test keeps them equal. -->",
        "",
        "Every finding of `sitemapkit validate` names one of these rules. Each id has its "
        "own anchor (`docs/rules.md#sm301`), which SARIF reports give as the rule's `helpUri`. "
        "`--select` and `--ignore` take ids or prefixes (`SM2`, `HRE`); `--strict` makes the "
        "rules marked *strict* errors. Sources are those of `spec/RULES.md`.",
    ]
    family = ""
    for rule in RULES.values():
        prefix = rule.id.rstrip("0123456789")
        head = f"{prefix}{rule.id[len(prefix)]}xx"
        if head != family:
            family = head
            lines += ["", f"## {family}"]
        traits = [f"**{rule.severity}**"]
        if rule.strict:
            traits.append("strict → error")
        if not rule.default:
            traits.append("off by default (`--select " + rule.id + "`)")
        if rule.online:
            traits.append("online only")
        if rule.checked_by:
            traits.append("decided by: " + ", ".join(rule.checked_by))
        lines += [
            "",
            f'<a id="{rule.id.lower()}"></a>',
            "",
            f"### {rule.id} `{rule.slug}`",
            "",
            " · ".join(traits),
            "",
            _md(rule.summary),
        ]
        if rule.exempt:
            lines += ["", f"*Waiver:* {_md(rule.exempt)}"]
        lines += ["", f"Source: {_md(rule.source)}"]
    return "\n".join(lines) + "\n"


def _sarif_rules(repository: str | None = None) -> list[dict[str, Any]]:
    out = []
    for rule in RULES.values():
        tags = ["sitemap", rule.id.rstrip("0123456789").lower()]
        if rule.strict:
            tags.append("strict")
        out.append(
            {
                "id": rule.id,
                "name": rule.slug,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": f"{rule.summary} Source: {rule.source}."},
                "helpUri": help_uri(rule.id, repository),
                "defaultConfiguration": {"level": rule.severity, "enabled": rule.default},
                "properties": {"tags": tags},
            }
        )
    return out


def render_sarif(
    report: ValidationReport,
    *,
    tool_version: str = "0",
    repository: str | None = None,
    **_: Any,
) -> str:
    """SARIF 2.1.0: one run, every catalogued rule as rule metadata, one result per finding.

    Each rule's ``helpUri`` is its entry on the rules page (:func:`help_uri`, resolved
    against ``repository`` when given).
    """
    index = {rid: i for i, rid in enumerate(RULES)}
    results = []
    for f in report.findings:
        location: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": _artifact_uri(f.where)}}
        }
        if f.line:
            region: dict[str, int] = {"startLine": f.line}
            if f.column:
                region["startColumn"] = f.column
            location["physicalLocation"]["region"] = region
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "level": f.severity,
            "message": {"text": f.message},
            "locations": [location],
        }
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        if f.loc:
            result["properties"] = {"loc": f.loc}
        results.append(result)
    notifications = [
        {"level": "note", "message": {"text": f"not checked: {s} ({r})"}}
        for s, r in report.not_checked
    ] + [
        {"level": "error", "message": {"text": f"could not read {t}: {e}"}}
        for t, e in report.unreadable
    ]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "sitemapkit",
                        "version": tool_version,
                        "informationUri": "https://www.sitemaps.org/protocol.html",
                        "rules": _sarif_rules(repository),
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not report.unreadable,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: ValidationReport, **_: Any) -> str:
    """GitHub Actions workflow commands, one per finding.

    ``::error file=F,line=L,col=C,title=SM301::message``, escaped as GitHub documents.
    """
    out: list[str] = []
    for f in report.findings:
        props = []
        if f.where:
            props.append(f"file={_gh_property(f.where)}")
        if f.line:
            props.append(f"line={f.line}")
        if f.column:
            props.append(f"col={f.column}")
        props.append(f"title={_gh_property(f.rule)}")
        out.append(f"::{f.severity} {','.join(props)}::{_gh_data(f.message)}")
    for sitemap, reason in report.not_checked:
        out.append(f"::notice title=not checked::{_gh_data(f'{sitemap}: {reason}')}")
    for target, error in report.unreadable:
        out.append(f"::error title=unreadable::{_gh_data(f'{target}: {error}')}")
    counts = [
        plural(len(report.files), "sitemap"),
        plural(report.errors, "error"),
        plural(report.warnings, "warning"),
    ]
    out.append("sitemapkit: " + ", ".join(counts))
    return "\n".join(out) + "\n"


Renderer = Callable[..., str]

#: ``--format`` name → renderer.
RENDERERS: Final[dict[str, Renderer]] = {
    "text": render_text,
    "json": render_json,
    "junit": render_junit,
    "sarif": render_sarif,
    "github": render_github,
}


def sort_findings(findings: Iterable[Finding], files: list[str]) -> list[Finding]:
    """Group by file (in ``files`` order), then by line and column; stable otherwise."""
    order = {name: i for i, name in enumerate(files)}
    return sorted(
        findings,
        key=lambda f: (order.get(f.where or "", len(order)), f.line or 0, f.column or 0),
    )


def severity_at_least(severity: Severity, fail_on: FailOn) -> bool:
    return _RANK[severity] >= _RANK[fail_on]


if __name__ == "__main__":  # python -m sitemapkit.lint.report > docs/rules.md
    print(rules_markdown(), end="")
