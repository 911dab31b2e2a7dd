"""Shared test helpers: parsing written output back with a hardened lxml parser, building
sitemap documents, and running the command in-process."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from lxml import etree

from .site import Site

# Hypothesis times its examples and their generation; on a loaded machine (CI runners, two
# cores shared) those clocks fail tests that are right. What a test asserts is not timed.
settings.register_profile("sitemapkit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("sitemapkit")

NS = {
    "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
}


def read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def parse(path_or_bytes: Path | bytes) -> etree._Element:
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else read_bytes(path_or_bytes)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(data, parser)


def locs(path: Path) -> list[str]:
    root = parse(path)
    return [e.text for e in root.iterfind("s:url/s:loc", NS)]


#: Volume tests, left out of the coverage measurement: each runs paths that the small tests
#: cover (they add under 0.1 % to the figure) at scale, where tracing makes it 2-10 times
#: slower: together they cost more under coverage than the rest of the suite. By name, so
#: that a test moved to another file stays out.
UNTRACED = frozenset(
    {
        "test_a_large_document_checked_in_the_tree_process_gets_the_same_findings",
        "test_generated_input_yields_exactly_its_rule[SM503]",
        "test_dumps_then_parse_gives_the_same_objects",
        "test_plain_documents_read_by_the_scanner_skip_the_tree_and_find_the_same",
        "test_killed_mid_run_recovers",
        "test_a_loc_of_five_million_entities_is_reported_without_blowing_up[validate]",
        "test_piece_by_piece_checks_find_what_the_whole_tree_finds[3]",
        "test_every_split_point_equals_whole[full]",
        "test_writer_shards_read_back_in_order",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.name in UNTRACED:
            item.add_marker(pytest.mark.no_cover)


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "public"


@pytest.fixture
def site() -> Iterator[Site]:
    """The loopback server of :mod:`tests.site`, closed after the test."""
    s = Site()
    try:
        yield s
    finally:
        s.close()


SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'


def urlset(*rows: str, ns: str = "", indent: str = "", decl: str = DECL) -> str:
    """A ``<urlset>`` document: ``decl``, the open tag (``ns``: more attributes), then each
    of ``rows`` on a line of its own after ``indent``; the line numbers are the rows'."""
    lines = "".join(f"{indent}{r}\n" for r in rows)
    return f'{decl}<urlset xmlns="{SM}"{ns}>\n{lines}</urlset>\n'


# -- the command, in-process -----------------------------------------------------------------

_RUNNER = CliRunner()


def cli_bytes(args: list[str], *, input: str | bytes | None = None) -> tuple[int, bytes, str]:
    """Run ``sitemapkit ARGS`` in-process through its entry point, ``main()``, which maps
    errors to exit codes; return (exit code, stdout bytes, stderr text). ``input`` is stdin."""
    from sitemapkit.cli.main import main

    with _RUNNER.isolation(input=input) as (out, err, _):
        try:
            main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
        else:  # pragma: no cover - main() always exits
            raise AssertionError("main() returned without sys.exit()")
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return code, out.getvalue(), err.getvalue().decode("utf-8", "backslashreplace")


def cli(args: list[str], *, input: str | bytes | None = None) -> tuple[int, str, str]:
    """As :func:`cli_bytes`, with stdout decoded: (exit code, stdout, stderr)."""
    code, out, err = cli_bytes(args, input=input)
    return code, out.decode(), err


def cli_modules(args: list[str], *, cwd: Path | None = None) -> tuple[int, str, set[str]]:
    """Run ``sitemapkit ARGS`` in a fresh interpreter; return (exit code, stdout, the
    modules it had imported at the end): what a command costs at start-up."""
    code = (
        "import sys; from sitemapkit.cli.main import run; "
        f"rc = run({args!r}); print(); print('modules:', rc, *sorted(sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
    out, _, last = done.stdout.rpartition("\nmodules: ")
    assert last, done.stderr
    rc, *modules = last.split()
    return int(rc), out, set(modules)
