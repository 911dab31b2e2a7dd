"""The rule catalogue (lint/rules.py) and the fixture corpus of tests/data.

Conventions of the corpus:

* ``invalid/<ID>-*.xml`` must yield rule ID and no other rule. The offending lines end with the
  comment ``<!-- ID -->`` (the name carries ``-L<n>`` where no comment can go, e.g. a text
  sitemap); a fixture without either yields findings without a line (file-level rules).
* A fixture is validated as published at the origin of its first ``<loc>`` plus its own file
  name, unless it says ``<!-- published-at: URL -->``; ``<!-- targets: a.xml … -->`` adds more
  targets (relative to the fixture). "Now" is 2024-06-01T12:00:00Z.
* ``valid/*.xml`` and ``valid/*.txt`` yield no error, and the rules they name in
  ``<!-- passes: … -->`` (or in their file name) do not fire: that is each rule's passing
  fixture.
* Failing inputs too large to keep as files (50,001 URLs, more than 50 MiB, …) are generated
  here (``GENERATED``).
* The audit's rules (``audit`` in the catalogue: AUD001-AUD004, and SM217 beside the online
  checks) have build folders as fixtures: ``audit/invalid/<ID>-*/`` must yield rule ID and no
  other when audited at ``https://example.com/``, on the sitemap lines that end with
  ``<!-- ID -->`` (none: findings about a page, without a line); ``audit/valid/*/`` yields
  none of the rules a sitemap of it names in ``<!-- passes: … -->``.
"""

from __future__ import annotations

import datetime as dt
import gzip
import importlib
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from sitemapkit import audit
from sitemapkit.core import parse, robots
from sitemapkit.core.finding import Finding
from sitemapkit.core.urls import normalize
from sitemapkit.errors import SitemapError
from sitemapkit.lint import audit as comparison
from sitemapkit.lint import checks, online, schema, tree
from sitemapkit.lint.rules import RULES, expand_ids, severity
from sitemapkit.validation import ValidationReport, validate
from sitemapkit.validation.process import TreeProcess

DATA = Path(__file__).parent.parent / "data"
INVALID = sorted([*(DATA / "invalid").glob("*.xml"), *(DATA / "invalid").glob("RB*.txt")])
VALID = sorted([*(DATA / "valid").glob("*.xml"), *(DATA / "valid").glob("*.txt")])
NOW = dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC)
RULE_ID = re.compile(r"\b(?:SM|IMG|VID|NEWS|HRE|RB|AUD)[0-9]{3}\b")
AUDIT_INVALID = sorted(p for p in (DATA / "audit" / "invalid").iterdir() if p.is_dir())
AUDIT_VALID = sorted(p for p in (DATA / "audit" / "valid").iterdir() if p.is_dir())
AUDIT_BASE = "https://example.com/"

#: Rules without a check, and why (RULES.md marks them as a waiver).
EXEMPT = {
    "SM214": "a waiver of SM210-SM213/SM504/SM505, applied through --allow-host",
}
#: The rules RULES.md marks *(online)*: decided by lint/online.py from HTTP answers. They
#: have no corpus fixture (a file cannot carry a server's answers); the tests against real
#: servers in ONLINE_TESTS stand in for it, one failing and one passing case per rule.
ONLINE = {"SM012", "SM217", "VID718", "VID719", "HRE908"}
ONLINE_TESTS = Path(__file__).parent.parent / "io" / "test_urlcheck.py"


def _published(path: Path) -> tuple[str, list[Path]]:
    """Where a fixture is validated as published, and its targets (itself first)."""
    text = path.read_bytes().decode("utf-8", "replace")
    explicit = re.search(r"<!-- published-at: (\S+) -->", text)
    if explicit:
        published = explicit.group(1)
    else:
        loc = re.search(r"<loc>\s*(?:<!\[CDATA\[)?([a-z]+://[^/<\s]*)", text) or re.search(
            r"^([a-z]+://[^/\s]*)", text, re.M
        )
        published = (loc.group(1) if loc else "https://example.com") + "/" + path.name
    targets = [path]
    extra = re.search(r"<!-- targets: ([^>]*) -->", text)
    if extra:
        targets += [path.parent / name for name in extra.group(1).split()]
    return published, targets


def _run(path: Path, **kw: object) -> ValidationReport:
    published, targets = _published(path)
    return validate(targets, published_at=published, now=NOW, **kw)  # type: ignore[arg-type]


def _selection(rule: str) -> list[str] | None:
    """Default rules, plus ``rule`` when it is off by default (SM404)."""
    if RULES[rule].default:
        return None
    return [r.id for r in RULES.values() if r.default or r.id == rule]


def _markers(path: Path, rule: str) -> set[tuple[str, int]]:
    out = set()
    m = re.search(r"-L([0-9]+)-", path.name)
    if m and path.name.startswith(rule):
        out.add((str(path), int(m.group(1))))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return out
    for n, line in enumerate(text.splitlines(), 1):
        if f"<!-- {rule} -->" in line:
            out.add((str(path), n))
    return out


def _on_marked_lines(report: ValidationReport, rule: str) -> bool:
    """Assert that the findings sit on the lines of the report's files marked for ``rule``,
    or have no line when none is marked; whether some were marked."""
    expected = set()
    for name in report.files:
        expected |= _markers(Path(name), rule)
    found = {(f.where, f.line) for f in report.findings}
    if expected:
        assert found == expected
    else:
        assert {line for _, line in found} == {None}
    return bool(expected)


# -- the catalogue --------------------------------------------------------------------------


def test_catalogue_has_every_block_of_rules_md() -> None:
    # every id of spec/RULES.md, and the six robots.txt rules of spec/DISCOVERY.md
    assert len(RULES) == 115
    prefixes = {rid.rstrip("0123456789") + rid[len(rid.rstrip("0123456789"))] for rid in RULES}
    assert prefixes == {
        "SM0", "SM1", "SM2", "SM3", "SM4", "SM5", "IMG6", "VID7", "NEWS8", "HRE9", "AUD0", "RB0"
    }  # fmt: skip
    assert {r for r in RULES if r.startswith("RB")} == robots.REPORTED
    written = set(re.findall(r'"(RB[0-9]{3})"', Path(robots.__file__).read_text("utf-8")))
    assert written == robots.REPORTED
    for rule in RULES.values():
        assert rule.severity in ("error", "warning")
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule.slug), rule.id
        assert rule.summary.endswith(".") and rule.source, rule.id
    slugs = [r.slug for r in RULES.values()]
    assert len(set(slugs)) == len(slugs)


def test_severities_and_strict_marks_follow_rules_md() -> None:
    strict = {r.id for r in RULES.values() if r.strict}
    assert strict == {"SM105", "SM302", "SM303", "SM505", "VID703", "VID715"}
    assert {r.id for r in RULES.values() if not r.default} == {"SM404"}
    for rid in ("SM002", "SM106", "SM205", "SM305", "SM306", "SM307", "SM405", "NEWS806"):
        assert RULES[rid].severity == "warning", rid
    for rid in ("SM001", "SM004", "SM110", "SM201", "SM210", "SM301", "SM502", "HRE905"):
        assert RULES[rid].severity == "error", rid


def test_exemptions_are_explicit() -> None:
    assert {r.id for r in RULES.values() if r.exempt} == set(EXEMPT)
    for rid in EXEMPT:
        assert not RULES[rid].checked_by, rid


def test_every_rule_has_a_check() -> None:
    parser_rules = set(parse.REPORTED)
    for rule in RULES.values():
        if rule.exempt:
            continue
        assert rule.checked_by, rule.id
        for where in rule.checked_by:
            if where == "parse":
                assert rule.id in parser_rules, f"{rule.id}: the reader does not report it"
            elif where == "schema":
                assert rule.id in schema.MAPPED, f"{rule.id}: no XSD error maps onto it"
            elif where == "online":
                assert rule.id in online.DECIDED, f"{rule.id}: lint/online.py does not decide it"
            elif where == "robots":
                assert rule.id in robots.REPORTED, f"{rule.id}: core/robots.py does not report it"
            elif where == "audit":
                assert rule.id in comparison.DECIDED, f"{rule.id}: lint/audit.py does not decide it"
            else:
                assert rule.id in checks.CHECKED, f"{rule.id}: no check decides it"
    # and nothing decides a rule the catalogue does not know
    assert set(checks.CHECKED) <= set(RULES)
    assert set(schema.MAPPED) - set(RULES) == set()
    assert set(online.DECIDED) == ONLINE == {r.id for r in RULES.values() if r.online}
    for rid in ONLINE:
        # SM217 is decided by the online checks and, from a crawl or a folder, by the audit
        by = ("online", "audit") if rid == "SM217" else ("online",)
        assert RULES[rid].checked_by == by and RULES[rid].severity == "warning", rid
    audited = {r.id for r in RULES.values() if "audit" in r.checked_by}
    assert audited == set(comparison.DECIDED) == {"AUD001", "AUD002", "AUD003", "AUD004", "SM217"}
    for rid in audited:
        assert RULES[rid].severity == "warning", rid


# -- severities: the catalogue's, decided by core.rules.severity -----------------------------

#: Documents that reach the checks' deliberate departures from the catalogue (each is an
#: explicit, commented argument where the finding is made), beside the corpus.
_SEVERITY_CASES = {
    "departures.xml": '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
    "<url><loc>https://example.com/a</loc><changefreq> daily</changefreq></url>\n"
    '<url><loc>https://example.com/b</loc><xhtml:link rel="alternate" hreflang="deu" '
    'href="https://example.com/b"/><xhtml:link rel="alternate" hreflang="es-419" '
    'href="https://example.com/es/b"/><xhtml:link rel="alternate" hreflang="en-UK" '
    'href="https://elsewhere.example/b"/></url>\n'
    "</urlset>\n",
    "blank-lines.txt": "https://example.com/a\n\nhttps://example.com/b\n",
    # rules whose corpus fixture shows the reader's half: here the checks' half
    "extensions.xml": '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
    "<url><loc>https://example.com/a</loc>"
    "<image:image><image:loc>https://example.com/ä b.jpg</image:loc></image:image>"
    "<video:video><video:thumbnail_loc>https://example.com/o{x}.jpg</video:thumbnail_loc>"
    "<video:title>A</video:title><video:description>A video</video:description>"
    "<video:content_loc>https://example.com/a.mp4</video:content_loc>"
    '<video:restriction relationship="allow">GB UK</video:restriction></video:video>'
    "<news:news><news:publication><news:name>The Paper</news:name>"
    "<news:language>xx</news:language></news:publication>"
    "<news:publication_date>2024-06-01T08:00:00+00:00</news:publication_date>"
    "<news:title>Rain</news:title></news:news>"
    '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/a"/>'
    '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/ü b"/></url>\n'
    "</urlset>\n",
}


def _expected_severity(f: Finding, strict: bool) -> str:
    """The catalogue's severity of a check's finding, or the departure the check makes on
    purpose (RULES.md names each: SM009 and SM206 are the warning halves of their rules,
    SM109 is an error for enumerations in strict mode, HRE902 warns for BCP 47 forms
    Google does not document, HRE905 warns for a target outside the set)."""
    if f.rule in ("SM009", "SM206"):
        return "warning"
    if f.rule == "SM109" and strict and "enumeration" in f.message:
        return "error"
    if f.rule == "HRE902" and ("three-letter" in f.message or "UN M.49" in f.message):
        return "warning"
    if f.rule == "HRE905" and "is not in the validated sitemaps" in f.message:
        return "warning"
    return severity(f.rule, strict=strict)


def _documents(path: Path, url: str) -> Iterator[tuple[Path, str]]:
    """A fixture, and the children of an index that lie beside it (as validate follows)."""
    yield path, url
    data = path.read_bytes()
    if b"<sitemapindex" not in data:
        return
    base = url[: url.rfind("/") + 1]
    for child in re.findall(rb"<loc>\s*([^<\s]+)", data):
        loc = child.decode()
        local = path.parent / loc[len(base) :]
        if loc.startswith(base) and local.is_file() and local != path:
            yield from _documents(local, loc)


def _check_findings(targets: list[tuple[Path, str | None]], strict: bool) -> list[Finding]:
    """Every finding the checks of lint/checks/ emit for a set of documents, driven as the
    validator drives them (lines left out: they do not change a severity)."""
    out: list[Finding] = []
    shared = checks.SetChecks()
    for path, url in targets:
        where = str(path)
        raw = path.read_bytes()
        out += checks.check_compression(raw[:2], url or where, where=where)
        data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        ctx = checks.Context(url=url, now=NOW, strict=strict)
        try:
            records, _, kind = parse.parse_bytes(data, source=where, base_url=url)
        except SitemapError:  # a fatal finding of the reader: the checks see no records
            records, kind = [], None
        try:
            root = etree.fromstring(data, etree.XMLParser(resolve_entities=False))
        except etree.XMLSyntaxError:
            root = None
        out += checks.check_document(root, data, kind=kind or "text", where=where, ctx=ctx)
        fc = checks.FileChecks(where, ctx, shared)
        for start in range(0, len(records), 3):  # in batches, as the reader gives them
            fc.add(records[start : start + 3])
        fc.finish()
        out += [p.finding(where, {}) for p in fc.pending] + fc.findings
        children = [(c, lastmod, None) for c, lastmod, _ in fc.children]
        node_url = normalize(url) if url else None
        shared.add_document(checks.DocumentNode(where, node_url, kind, children, fc.max_day))
    return out + shared.finish()


def _corpus_sets(tmp: Path) -> Iterator[list[tuple[Path, str | None]]]:
    for path in [*INVALID, *VALID]:
        published, targets = _published(path)
        docs: list[tuple[Path, str | None]] = list(_documents(path, published))
        docs += [(t, None) for t in targets[1:]]
        yield docs
    for name, text in _SEVERITY_CASES.items():
        (tmp / name).write_text(text, encoding="utf-8")
        yield [(tmp / name, "https://example.com/" + name)]


@pytest.mark.parametrize("strict", [False, True])
def test_every_check_finding_has_the_catalogue_severity(tmp_path: Path, strict: bool) -> None:
    """Equality, not membership: each finding a check emits over the corpus has the
    severity :func:`severity` gives its rule (strict rules promoted only when strict is
    on), or the one departure RULES.md documents for it. And every rule a check decides
    is emitted at least once, so none goes unchecked here."""
    emitted: set[str] = set()
    departures: set[tuple[str, str]] = set()
    for docs in _corpus_sets(tmp_path):
        for f in _check_findings(docs, strict):
            expected = _expected_severity(f, strict)
            assert f.severity == expected, f"{f} (expected {expected})"
            emitted.add(f.rule)
            if expected != severity(f.rule, strict=strict):
                departures.add((f.rule, expected))
    assert set(checks.CHECKED) <= emitted, sorted(set(checks.CHECKED) - emitted)
    reached = {("SM009", "warning"), ("SM206", "warning"), ("HRE902", "warning")}
    reached |= {("HRE905", "warning")} | ({("SM109", "error")} if strict else set())
    assert departures == reached


def test_every_check_is_found_from_its_rule_id() -> None:
    """Each check's module says in its docstring which rule ids it decides, and the
    package's table names that module beside them."""
    table = (checks.__doc__ or "").split("=====", 1)[1]
    for rule, deciders in checks.CHECKED.items():
        for name in deciders:
            module_name, _ = name.rsplit(".", 1)
            module = importlib.import_module(module_name)
            assert _names(rule, module.__doc__ or ""), f"{rule}: not named by {module_name}"
            row = re.search(rf"``{module_name.rsplit('.', 1)[1]}``(.*?)(?=\n``|\n=)", table, re.S)
            assert row is not None and _names(rule, row.group(1)), f"{rule}: not in the table"


def _names(rule: str, text: str) -> bool:
    """Whether ``text`` names ``rule``, alone or in a range such as SM207-SM213."""
    if rule in text:
        return True
    for a, b in re.findall(r"([A-Z]+[0-9]+)-([A-Z]+[0-9]+)", text):
        prefix = a.rstrip("0123456789")
        number = rule[len(prefix) :]
        if rule.startswith(prefix) and int(a[len(prefix) :]) <= int(number) <= int(
            b[len(prefix) :]
        ):
            return True
    return False


def test_every_online_rule_has_network_tests() -> None:
    """Each online rule is asserted to fire (``rule == "ID"`` / ``{"ID"}``) and asserted not
    to fire (``"ID" not in``) by the tests against real servers."""
    text = ONLINE_TESTS.read_text(encoding="utf-8")
    for rid in ONLINE:
        fires = re.search(rf'(?:== |\{{|\()"{rid}"', text)
        assert fires, f"{rid}: no test in {ONLINE_TESTS.name} asserts that it fires"
        assert f'"{rid}" not in' in text, f"{rid}: no test asserts that it does not fire"


def _claims() -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for path in VALID:
        text = path.read_text(encoding="utf-8")
        named = set(RULE_ID.findall(path.name))
        for block in re.findall(r"passes:([^>]*)-->", text):
            named |= set(RULE_ID.findall(block))
        for rid in named:
            out.setdefault(rid, []).append(path)
    return out


def test_every_rule_has_a_failing_and_a_passing_fixture() -> None:
    failing = {p.name.split("-", 1)[0] for p in INVALID} | set(GENERATED)
    passing = set(_claims())
    audit_failing = {p.name.split("-", 1)[0] for p in AUDIT_INVALID}
    audit_passing = {rid for p in AUDIT_VALID for rid in _audit_claims(p)}
    for rule in RULES.values():
        if "audit" in rule.checked_by:
            assert rule.id in audit_failing, f"{rule.id}: no tests/data/audit/invalid/{rule.id}-*/"
            assert rule.id in audit_passing, f"{rule.id}: no audit/valid folder claims it"
            continue
        if rule.exempt or rule.online:
            continue
        assert rule.id in failing, f"{rule.id}: no tests/data/invalid/{rule.id}-*.xml"
        assert rule.id in passing, f"{rule.id}: no valid fixture claims it"
    assert failing <= set(RULES)
    assert audit_failing <= set(comparison.DECIDED)


def _audit_claims(folder: Path) -> set[str]:
    named: set[str] = set()
    for path in folder.glob("*.xml"):
        for block in re.findall(r"passes:([^>]*)-->", path.read_text(encoding="utf-8")):
            named |= set(RULE_ID.findall(block))
    return named


@pytest.mark.parametrize("folder", AUDIT_INVALID, ids=lambda p: p.name)
def test_audit_fixture_yields_exactly_its_rule(folder: Path) -> None:
    rule = folder.name.split("-", 1)[0]
    report = audit(folder, base_url=AUDIT_BASE)
    assert {f.rule for f in report.findings} == {rule}, [str(f) for f in report.findings]
    assert not report.unreadable and not report.not_checked
    if _on_marked_lines(report, rule):
        # at the entry's <loc>: the column is where "<loc>" starts on its line
        for f in report.findings:
            line = Path(f.where or "").read_text(encoding="utf-8").splitlines()[(f.line or 0) - 1]
            assert f.column == line.index("<loc>") + 1, str(f)
    for f in report.findings:
        assert f.severity == "warning" and f.loc and f.message[0].isupper(), str(f)


@pytest.mark.parametrize("folder", AUDIT_VALID, ids=lambda p: p.name)
def test_audit_valid_fixture_yields_none_of_its_rules(folder: Path) -> None:
    claimed = _audit_claims(folder)
    report = audit(folder, base_url=AUDIT_BASE)
    assert claimed and not {f.rule for f in report.findings} & claimed, [
        str(f) for f in report.findings
    ]
    assert not report.unreadable and not report.not_checked and report.files


def test_expand_ids() -> None:
    assert expand_ids(["SM3"]) == {r for r in RULES if r.startswith("SM3")}
    assert expand_ids(["hre905, sm101"]) == {"HRE905", "SM101"}
    with pytest.raises(ValueError, match="names no rule"):
        expand_ids(["XX1"])


# -- the corpus -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_fixture_yields_exactly_its_rule(path: Path) -> None:
    rule = path.name.split("-", 1)[0]
    report = _run(path, select=_selection(rule))
    assert {f.rule for f in report.findings} == {rule}, [str(f) for f in report.findings]
    assert not report.unreadable
    _on_marked_lines(report, rule)
    for f in report.findings:
        assert f.severity == RULES[rule].severity or rule in ("HRE905", "SM206"), str(f)
        assert (f.message[0].isupper() or f.message[0] in "<'") and len(f.message) > 20


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_fixture_yields_no_error(path: Path) -> None:
    claimed = {rid for rid, paths in _claims().items() if path in paths}
    select = [r.id for r in RULES.values() if r.default or r.id in claimed]
    report = _run(path, select=select)
    assert report.errors == 0, [str(f) for f in report.findings]
    assert not {f.rule for f in report.findings} & claimed, [str(f) for f in report.findings]
    assert not report.unreadable and not report.not_checked


def test_sitemaps_org_example_reads_whole() -> None:
    report = _run(DATA / "valid" / "sitemaps-org-urlset.xml")
    assert (report.entries, report.findings) == (5, [])
    index = _run(DATA / "valid" / "sitemaps-org-index.xml")
    assert len(index.files) == 3 and index.entries == 5 and index.findings == []


# -- large inputs, generated ------------------------------------------------------------------

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
NEWS = ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
IMAGE = ' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'


def _too_many_urls() -> tuple[str, int | None]:
    rows = "".join(f"<url><loc>https://example.com/p{i}</loc></url>\n" for i in range(50_001))
    return HEAD + URLSET + ">\n" + rows + "</urlset>\n", 2 + 50_001


def _too_large() -> tuple[str, int | None]:
    pad = ("<!--" + "x" * 1_048_576 + "-->\n") * 50  # libxml2 caps one comment at 10 MB
    return (
        HEAD + URLSET + ">\n<url><loc>https://example.com/</loc></url>\n" + pad + "</urlset>\n",
        None,
    )


def _robots_too_large() -> tuple[str, int | None]:
    """A robots.txt past the 500 KiB that Google reads, with a Sitemap: line at its end."""
    pad = "# " + "x" * 600_000 + "\n"
    head = "User-agent: *\nDisallow:\nSitemap: https://example.com/s.xml\n"
    return head + pad + "Sitemap: https://example.com/s2.xml\n", None


def _too_many_sitemaps() -> tuple[str, int | None]:
    rows = "".join(
        f"<sitemap><loc>https://example.com/s{i}.xml</loc><lastmod>2024-05-01</lastmod></sitemap>\n"
        for i in range(50_001)
    )
    body = '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    return HEAD + body + rows + "</sitemapindex>\n", 2 + 50_001


def _too_many_news() -> tuple[str, int | None]:
    news = (
        "<news:news><news:publication><news:name>The Example Times</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:publication_date>2024-06-01T08:00:00+00:00</news:publication_date>"
        "<news:title>Article {i}</news:title></news:news>"
    )
    rows = "".join(
        f"<url><loc>https://example.com/n{i}</loc>{news.format(i=i)}</url>\n" for i in range(1_001)
    )
    return HEAD + URLSET + NEWS + ">\n" + rows + "</urlset>\n", 2 + 1_001


def _too_many_images() -> tuple[str, int | None]:
    images = "".join(
        f"<image:image><image:loc>https://example.com/i{i}.jpg</image:loc></image:image>\n"
        for i in range(1_001)
    )
    body = f"<url><loc>https://example.com/</loc>\n{images}</url>\n"
    return HEAD + URLSET + IMAGE + ">\n" + body + "</urlset>\n", 3 + 1_001


GENERATED: dict[str, Callable[[], tuple[str, int | None]]] = {
    "SM110": _too_many_urls,
    "SM006": _too_large,
    "SM503": _too_many_sitemaps,
    "NEWS803": _too_many_news,
    "IMG602": _too_many_images,
    "RB009": _robots_too_large,
}


@pytest.mark.parametrize("rule", sorted(GENERATED))
def test_generated_input_yields_exactly_its_rule(rule: str, tmp_path: Path) -> None:
    text, line = GENERATED[rule]()
    path = tmp_path / (f"{rule}.txt" if rule.startswith("RB") else f"{rule}.xml")
    path.write_text(text, encoding="utf-8")
    report = validate(path, published_at=f"https://example.com/{path.name}", now=NOW, follow=False)
    assert {f.rule for f in report.findings} == {rule}, [str(f) for f in report.findings[:5]]
    assert [f.line for f in report.findings] == [line]


# -- large documents: checked piece by piece ---------------------------------------------------


@pytest.mark.parametrize("piece", [1, 3])
def test_piece_by_piece_checks_find_what_the_whole_tree_finds(
    monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    """Every corpus document, checked in pieces of one or three entries (as documents
    over 4 MiB are), gets the findings of the whole tree: same rules, lines and locs
    (schema findings lose their columns)."""
    from sitemapkit import validation

    def findings(report: ValidationReport) -> list[tuple[object, ...]]:
        return sorted(
            (f.rule, f.severity, f.message, f.where, f.line, f.loc) for f in report.findings
        )

    real = tree.piece_pass
    used: list[str] = []

    def spy(text: bytes, where: str, ctx: checks.Context, piece: int = piece) -> object:
        scan = real(text, where, ctx, piece)
        if scan is not None:
            used.append(where)
        return scan

    everything = [r.id for r in RULES.values()]
    for path in [*INVALID, *VALID]:
        whole = _run(path, select=everything)
        monkeypatch.setattr("sitemapkit.lint.tree.piece_pass", spy)
        pieces = _run(path, select=everything, tuning=validation.Tuning(pieces_from=0, piece=piece))
        monkeypatch.undo()
        assert findings(pieces) == findings(whole), path.name
        assert (pieces.entries, pieces.notes) == (whole.entries, whole.notes), path.name
    assert len(used) > 80  # most of the corpus took the piece pass


def test_a_large_document_checked_in_the_tree_process_gets_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 6 MB sitemap goes to the tree process and is checked piece by piece there; the
    findings (lines included) are those of the whole tree checked in this process."""
    from sitemapkit import validation

    rows = []
    for i in range(40_000):
        extra = "<priority>1.5</priority>" if i % 9_999 == 7 else "<priority>0.5</priority>"
        lastmod = "2024-13-01" if i == 31_234 else "2024-05-01"
        rows.append(
            f"<url><loc>https://example.com/p/{i}?q=1&amp;r=2</loc>"
            f"<lastmod>{lastmod}</lastmod>{extra}</url>\n"
        )
    rows.insert(20_000, "<url><loc>https://example.com/p/1?q=1&amp;r=2</loc></url>\n")
    path = tmp_path / "sitemap.xml"
    path.write_text(HEAD + URLSET + ">\n" + "".join(rows) + "</urlset>\n")
    assert path.stat().st_size > tree.PIECES_FROM

    started: list[object] = []
    real = TreeProcess.run

    def run(self: object, plain: bytes, where: str, ctx: checks.Context) -> object:
        started.append(where)
        return real(self, plain, where, ctx)  # type: ignore[arg-type]

    def findings(report: ValidationReport) -> list[tuple[object, ...]]:
        return sorted((f.rule, f.message, f.line, f.loc) for f in report.findings)

    url = "https://example.com/sitemap.xml"
    monkeypatch.setattr(TreeProcess, "run", run)
    remote = validate(path, published_at=url, now=NOW)
    assert started == [str(path)]
    whole = validation.Tuning(remote_from=1 << 40, pieces_from=1 << 40)
    local = validate(path, published_at=url, now=NOW, tuning=whole)
    assert findings(remote) == findings(local)
    rules = {f.rule for f in local.findings}
    assert {"SM215", "SM304", "SM402"} <= rules
    assert ("SM304", 31_238) in {(f.rule, f.line) for f in remote.findings}


def test_findings_are_capped_per_rule_and_document(tmp_path: Path) -> None:
    rows = "".join(
        f"<url><loc>https://other.example/p{i}</loc><priority>{'2' if i < 3 else '0.5'}"
        "</priority></url>\n"
        for i in range(30)
    )
    path = tmp_path / "sitemap.xml"
    path.write_text(HEAD + URLSET + ">\n" + rows + "</urlset>\n")
    url = "https://example.com/sitemap.xml"
    capped = validate(path, published_at=url, now=NOW, max_findings=5)
    everything = validate(path, published_at=url, now=NOW, max_findings=None)
    assert [f.line for f in everything.findings if f.rule == "SM210"] == list(range(3, 33))
    assert [f.line for f in capped.findings if f.rule == "SM210"] == list(range(3, 8))
    assert capped.omitted == {"SM210": 25} and everything.omitted == {}
    assert [f.line for f in capped.findings if f.rule == "SM402"] == [3, 4, 5]  # under the cap
    assert any("25 more SM210 findings" in n for n in capped.notes)
    assert capped.summary()["omitted"] == {"SM210": 25}


_ENTRY_CHOICES = [
    "<url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2024-05-01</lastmod></url>",
    "<url>\n  <loc>https://example.com/b</loc>\n  <changefreq>daily</changefreq>\n"
    "  <priority>0.5</priority>\n</url>",
    "<url><loc>https://example.com/a?x=1&amp;y=2</loc></url>",  # a duplicate
    "<url><loc>https://other.example/c</loc></url>",  # another host: SM210
    "<url><loc>https://example.com/d</loc><lastmod>2031-01-01T00:00:00Z</lastmod></url>",
    "<url><loc>https://example.com/e</loc><lastmod>1970-01-01</lastmod></url>",
    "<url><loc>https://example.com/f</loc><lastmod>2024-02-30</lastmod></url>",
    "<url><loc>https://example.com/g</loc><priority>1</priority></url>",
    "<url><loc>HTTPS://Example.com/h</loc></url>",
    "<url><loc>https://example.com/i/</loc></url><url><loc>http://example.com/i</loc></url>",
    "<url><loc>https://example.com/j</loc><priority>0.5</priority><changefreq>daily"
    "</changefreq></url>",
    "<url><loc>https://example.com/k</loc></url><!-- a comment -->",
    "<url><loc> https://example.com/l</loc></url>",
    "<url><loc>https://example.com/m</loc><image:image><image:loc>https://example.com/"
    "m.jpg</image:loc></image:image></url>",
    "<url><loc>https://example.com/n\u00fc</loc></url>",
    "<url><loc>https://example.com/o</loc><foo>x</foo></url>",
]
_PLAIN_ENTRIES = st.sampled_from(_ENTRY_CHOICES)
#: The choices the reader's scanner takes (it refuses the others or they are not plain).
_SCANNED = {_ENTRY_CHOICES[i] for i in (0, 1, 2, 3, 4, 5, 9)}
_ROOTS = st.sampled_from(
    [
        URLSET + ">",
        URLSET + IMAGE + ">",
        URLSET + ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9 '
        'http://example.com/sitemap.xsd">',
        URLSET + ' xmlns:xhtml="http://example.com/not-xhtml">',
    ]
)


@settings(max_examples=120, deadline=None)
@given(_ROOTS, st.lists(_PLAIN_ENTRIES, min_size=1, max_size=12), st.booleans())
def test_plain_documents_read_by_the_scanner_skip_the_tree_and_find_the_same(
    root: str, entries: list[str], stylesheet: bool
) -> None:
    """A urlset the reader's scanner reads whole is not parsed into a tree; its findings
    (lines, columns, locs) are those of the full tree pass."""
    from sitemapkit import validation

    head = HEAD + ('<?xml-stylesheet type="text/xsl" href="/s.xsl"?>\n' if stylesheet else "")
    data = (head + root + "\n" + "\n".join(entries) + "\n</urlset>\n").encode()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sitemap.xml"
        path.write_bytes(data)
        url = "https://example.com/sitemap.xml"

        used: list[bool] = []
        real = tree.plain_pass

        def spy(plain: bytes, where: str, ctx: checks.Context) -> object:
            used.append(True)
            return real(plain, where, ctx)

        def run(shortcut: bool) -> list[tuple[object, ...]]:
            tuning = validation.Tuning(defer_from=0 if shortcut else 1 << 40, remote_from=1 << 40)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr("sitemapkit.lint.tree.plain_pass", spy)
                report = validate(path, published_at=url, now=NOW, select=ALL_RULES, tuning=tuning)
            return sorted(
                (f.rule, f.severity, f.message, f.line, f.column, f.loc) for f in report.findings
            )

        assert run(True) == run(False)
        # documents of scanner-plain entries only did skip the tree
        assert bool(used) == (set(entries) <= _SCANNED)


ALL_RULES = list(RULES)
