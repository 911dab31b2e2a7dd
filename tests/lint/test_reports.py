"""The renderings of a validation report (lint/report.py): text, JSON, JUnit XML, SARIF, GitHub."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from sitemapkit.core.finding import Finding
from sitemapkit.lint.report import (
    RENDERERS,
    ValidationReport,
    help_uri,
    render_github,
    render_json,
    render_junit,
    render_sarif,
    render_text,
    rules_markdown,
)
from sitemapkit.lint.rules import RULES


@pytest.fixture
def report() -> ValidationReport:
    return ValidationReport(
        findings=[
            Finding(
                "SM301",
                "error",
                "Invalid <lastmod> '2024/05/01'",
                "public/a.xml",
                3,
                None,
                "https://example.com/a",
            ),
            Finding(
                "SM105",
                "warning",
                "<lastmod> is out of order, 100% sure: fix, now",
                "public/a.xml",
                7,
                5,
                "https://example.com/b",
            ),
            Finding("SM106", "warning", "The sitemap lists no entries", "public/b.xml"),
            Finding("SM210", "error", "Line one\nline two", "https://example.com/c.xml", 2, 9),
        ],
        files=["public/a.xml", "public/b.xml", "https://example.com/c.xml", "public/ok.xml"],
        entries=12,
        not_checked=[("https://example.com/d.xml", "no local file public/d.xml")],
        unreadable=[("public/missing.xml", "No such file or directory")],
        excerpts={
            ("public/a.xml", 3): "  <url><loc>https://example.com/a</loc>"
            "<lastmod>2024/05/01</lastmod></url>"
        },
    )


def test_counts_and_summary(report: ValidationReport) -> None:
    assert (report.errors, report.warnings, report.ok) == (2, 2, False)
    assert report.failed("error") and report.failed("warning")
    clean = ValidationReport(findings=[Finding("SM106", "warning", "empty")], files=["x"])
    assert not clean.failed("error") and clean.failed("warning") and clean.ok
    summary = report.summary()
    assert summary["rules"] == {"SM105": 1, "SM106": 1, "SM210": 1, "SM301": 1}
    assert summary["not_checked"] == [
        {"sitemap": "https://example.com/d.xml", "reason": "no local file public/d.xml"}
    ]


def test_text_groups_by_file_with_the_source_line(report: ValidationReport) -> None:
    text = render_text(report)
    lines = text.splitlines()
    assert lines[0] == "public/a.xml"
    assert re.fullmatch(r" +3  error    SM301  Invalid <lastmod> '2024/05/01'", lines[1])
    assert lines[2].endswith(
        "|   <url><loc>https://example.com/a</loc><lastmod>2024/05/01</lastmod></url>"
    )
    assert re.fullmatch(r" +7:5  warning  SM105  .*", lines[3])
    assert "public/b.xml" in lines and "public/ok.xml" not in text
    assert "note: not checked: https://example.com/d.xml (no local file public/d.xml)" in lines
    assert "error: could not read public/missing.xml: No such file or directory" in lines
    assert lines[-1] == (
        "4 sitemaps, 12 entries: 2 errors, 2 warnings "
        "(SM105 ×1, SM106 ×1, SM210 ×1, SM301 ×1); 1 not checked"
    )
    assert "\x1b" not in text


def test_text_colours_only_through_the_style_function(report: ValidationReport) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def style(text: str, **kw: Any) -> str:
        calls.append((text, kw))
        return f"[{text}]"

    text = render_text(report, style=style)
    assert "[public/a.xml]" in text and "[error  ]" in text
    assert ("public/a.xml", {"bold": True}) in calls
    assert any(kw.get("fg") == "red" for _, kw in calls)
    clean = render_text(ValidationReport(files=["s.xml"], entries=1), style=style)
    assert clean == "1 sitemap, 1 entry: [no problems found]\n"


def test_text_clips_long_lines_around_the_column() -> None:
    long = "<url><loc>" + "a" * 300 + "</loc><lastmod>bad</lastmod>" + "b" * 300
    report = ValidationReport(
        findings=[Finding("SM301", "error", "Invalid lastmod", "s.xml", 1, 320)],
        files=["s.xml"],
        excerpts={("s.xml", 1): long},
    )
    excerpt = render_text(report).splitlines()[2]
    assert "<lastmod>bad" in excerpt and excerpt.count("…") == 2 and len(excerpt) < 130


def test_json_shape(report: ValidationReport) -> None:
    doc = json.loads(render_json(report))
    assert set(doc) == {"findings", "summary"}
    assert doc["findings"][0] == {
        "rule": "SM301",
        "severity": "error",
        "message": "Invalid <lastmod> '2024/05/01'",
        "file": "public/a.xml",
        "line": 3,
        "column": None,
        "loc": "https://example.com/a",
    }
    assert doc["summary"]["errors"] == 2 and doc["summary"]["files"] == 4


def test_junit_parses_and_fails_at_the_threshold(report: ValidationReport) -> None:
    root = etree.fromstring(render_junit(report, fail_on="error").encode())
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "2", "1")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {
        "public/a.xml",
        "public/b.xml",
        "https://example.com/c.xml",
        "public/ok.xml",
        "public/missing.xml",
    }
    a = suites["public/a.xml"]
    assert [c.get("name") for c in a.iter("testcase")] == ["SM301 line 3", "SM105 line 7"]
    assert a.findtext("testcase/failure") is not None
    assert [f.get("type") for f in a.iter("failure")] == ["SM301 error"]
    assert a.find("testcase[2]/system-out") is not None  # a warning below --fail-on passes
    assert [c.get("name") for c in suites["public/ok.xml"].iter("testcase")] == ["valid"]
    assert suites["public/missing.xml"].find("testcase/error") is not None
    strict = etree.fromstring(render_junit(report, fail_on="warning").encode())
    assert strict.get("failures") == "4"


def _check_sarif(doc: dict[str, Any]) -> None:
    """The SARIF 2.1.0 schema's requirements for what the report uses."""
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    assert isinstance(doc["runs"], list) and doc["runs"]
    for run in doc["runs"]:
        driver = run["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        rules = driver["rules"]
        ids = [r["id"] for r in rules]
        assert len(ids) == len(set(ids))
        for rule in rules:
            assert isinstance(rule["shortDescription"]["text"], str)
            assert rule["defaultConfiguration"]["level"] in ("none", "note", "warning", "error")
        for inv in run.get("invocations", []):
            assert isinstance(inv["executionSuccessful"], bool)
            for note in inv.get("toolExecutionNotifications", []):
                assert isinstance(note["message"]["text"], str)
        for result in run["results"]:
            assert isinstance(result["message"]["text"], str)
            assert result["level"] in ("none", "note", "warning", "error")
            if "ruleIndex" in result:
                assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
            for location in result["locations"]:
                physical = location["physicalLocation"]
                assert isinstance(physical["artifactLocation"]["uri"], str)
                region = physical.get("region")
                if region is not None:
                    assert isinstance(region["startLine"], int) and region["startLine"] >= 1
                    assert region.get("startColumn", 1) >= 1


def test_sarif_is_structurally_valid_with_rule_metadata(report: ValidationReport) -> None:
    doc = json.loads(render_sarif(report, tool_version="1.2.3"))
    _check_sarif(doc)
    run = doc["runs"][0]
    assert run["tool"]["driver"]["version"] == "1.2.3"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(RULES)
    sm404 = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "SM404")
    assert sm404["defaultConfiguration"] == {"level": "warning", "enabled": False}
    first = run["results"][0]
    assert first["ruleId"] == "SM301" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "public/a.xml"},
        "region": {"startLine": 3},
    }
    assert "region" not in run["results"][2]["locations"][0]["physicalLocation"]
    uri = run["results"][3]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "https://example.com/c.xml"
    assert run["invocations"][0]["executionSuccessful"] is False


def test_sarif_of_an_absolute_path_is_a_file_uri() -> None:
    report = ValidationReport(
        findings=[Finding("SM301", "error", "x", "/srv/site map/a.xml", 1)], files=["a"]
    )
    doc = json.loads(render_sarif(report))
    location = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "file:///srv/site%20map/a.xml"


def test_github_annotations_are_escaped(report: ValidationReport) -> None:
    lines = render_github(report).splitlines()
    assert lines[0] == (
        "::error file=public/a.xml,line=3,title=SM301::Invalid <lastmod> '2024/05/01'"
    )
    assert lines[1] == (
        "::warning file=public/a.xml,line=7,col=5,title=SM105::"
        "<lastmod> is out of order, 100%25 sure: fix, now"
    )
    assert lines[2] == "::warning file=public/b.xml,title=SM106::The sitemap lists no entries"
    assert lines[3] == (
        "::error file=https%3A//example.com/c.xml,line=2,col=9,title=SM210::Line one%0Aline two"
    )
    assert lines[4].startswith("::notice title=not checked::https://example.com/d.xml")
    assert lines[5].startswith("::error title=unreadable::public/missing.xml")
    assert lines[-1] == "sitemapkit: 4 sitemaps, 2 errors, 2 warnings"


def test_every_format_is_registered() -> None:
    assert set(RENDERERS) == {"text", "json", "junit", "sarif", "github"}
    empty = ValidationReport()
    for render in RENDERERS.values():
        assert render(empty, fail_on="error", tool_version="0", style=None)


ROOT = Path(__file__).resolve().parents[2]


def test_the_rules_page_is_what_the_catalogue_generates() -> None:
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert page == rules_markdown(), (
        "docs/rules.md is out of date: python -m sitemapkit.lint.report > docs/rules.md"
    )


def test_sarif_points_each_rule_at_its_own_anchor(report: ValidationReport) -> None:
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    rules = json.loads(render_sarif(report))["runs"][0]["tool"]["driver"]["rules"]
    uris = [r["helpUri"] for r in rules]
    assert len(set(uris)) == len(RULES)
    for rule, uri in zip(rules, uris, strict=True):
        path, anchor = uri.split("#")
        assert path == "docs/rules.md" and anchor == rule["id"].lower()
        assert f'<a id="{anchor}"></a>\n\n### {rule["id"]} `{rule["name"]}`' in page
    on_github = json.loads(render_sarif(report, repository="https://github.com/o/sitemapkit/"))
    sm301 = next(r for r in on_github["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "SM301")
    assert sm301["helpUri"] == "https://github.com/o/sitemapkit/blob/HEAD/docs/rules.md#sm301"
    elsewhere = help_uri("HRE901", "https://docs.example.org/sitemapkit")
    assert elsewhere == "https://docs.example.org/sitemapkit/docs/rules.md#hre901"
