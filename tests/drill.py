"""The publish drills of issue #16 §1, shared by tests/test_publish.py (short) and
bench/publish.py (full): two URL sets, a ``write`` of one over the other in a child that is
killed, and the check of the folder right after the kill.

The sets: A has ``n`` URLs; B drops a fifth of them, changes the lastmod of a tenth and adds
new ones (``n // 15``), so that with ``max_urls = n * 10 // 80`` A makes 8 shards and B 7.
Entries are compared as (loc, lastmod), so a changed URL tells the sets apart too.

The child is ``python -m sitemapkit write`` (``forked=True``: the same through the API with
the forked path's threshold lowered, ``write_inputs(parallel_min=0)``). A deterministic kill
uses the writer's drill hook (``SITEMAPKIT_DRILL_KILL_AT=N``: SIGKILL just before publish step
N); ``patch=True`` counts the publish steps from outside instead (each ``os.replace`` into the
folder or of the journal, each removal in the folder), for a tree without the hook (the
figures before the change).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

BASE = "https://example.com/"
_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
_SRC = Path(__file__).resolve().parent.parent / "src"

Entry = tuple[str, str]


def sets(n: int, pad: int = 0) -> tuple[list[Entry], list[Entry]]:
    """The sets A and B (see the module docstring); ``pad`` lengthens every path."""
    tail = "-" + "p" * pad if pad else ""
    a = [(f"{BASE}item/{i}{tail}", "2024-01-01") for i in range(n)]
    b = [
        (loc, "2024-02-02" if i % 10 == 3 else lm)
        for i, (loc, lm) in enumerate(a)
        if i % 5 != 1  # a fifth removed
    ]
    b += [(f"{BASE}new/{i}{tail}", "2024-02-02") for i in range(n // 15)]
    return a, b


def csv_text(entries: Sequence[Entry]) -> str:
    return "loc,lastmod\n" + "".join(f"{loc},{lm}\n" for loc, lm in entries)


class Mixed(AssertionError):
    """The folder shows no whole set: a URL listed twice, missing, or a file not there."""


def listed(out: Path) -> list[Entry]:
    """Every entry a reader finds who follows ``sitemap.xml`` (an index: its children)."""
    index = out / "sitemap.xml"
    if not index.is_file():
        raise Mixed(f"{index} is not there")
    root = _parse(index)
    if root.tag != _NS + "sitemapindex":
        return _entries(root)
    got: list[Entry] = []
    for loc in root.iterfind(f"{_NS}sitemap/{_NS}loc"):
        path = out / urlsplit(loc.text or "").path.rsplit("/", 1)[-1]
        if not path.is_file():
            raise Mixed(f"the index names {path.name}, which is not there")
        got += _entries(_parse(path))
    return got


def _parse(path: Path) -> etree._Element:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        import gzip

        data = gzip.decompress(data)
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))


def _entries(root: etree._Element) -> list[Entry]:
    return [
        (u.findtext(_NS + "loc") or "", u.findtext(_NS + "lastmod") or "")
        for u in root.iterfind(_NS + "url")
    ]


def which(out: Path, named: dict[str, Sequence[Entry]]) -> str:
    """The name of the one set the folder shows whole, each URL once; else :class:`Mixed`."""
    got = listed(out)
    if len(set(got)) != len(got):
        raise Mixed(f"{len(got) - len(set(got)):,} URLs listed twice")
    for name, entries in named.items():
        if set(got) == set(entries):
            return name
    near = {k: len(set(got) & set(v)) for k, v in named.items()}
    raise Mixed(f"a mixed set: {len(got):,} URLs, of them {near} from each set")


def staging(out: Path) -> list[str]:
    """The staging folders beside ``out``."""
    return sorted(p.name for p in out.parent.glob(f".{out.name}.sitemapkit-*") if p.is_dir())


@dataclass(frozen=True)
class Run:
    """How the child writes ``src`` into ``out``."""

    out: Path
    max_urls: int
    state: Path | None = None
    forked: bool = False
    gzip: bool = True
    src_tree: Path = _SRC

    def argv(self, src: Path) -> list[str]:
        args = [
            "write",
            str(src),
            "-o",
            str(self.out),
            "--base-url",
            BASE,
            "--max-urls",
            str(self.max_urls),
        ]
        if self.gzip:
            args.append("--gzip")
        if self.state is not None:
            args += ["--state", str(self.state)]
        return args

    def command(self, src: Path, *, patch: int | None = None) -> list[str]:
        code = _PATCH.format(out=str(self.out.resolve()), at=patch) if patch else ""
        if self.forked:
            code += _FORKED.format(
                src=str(src), out=str(self.out), max_urls=self.max_urls, gzip=self.gzip
            )
        else:
            code += f"from sitemapkit.cli.main import main\nmain({self.argv(src)!r})\n"
        return [sys.executable, "-c", code]

    def env(self, kill_at: int | None = None) -> dict[str, str]:
        env = dict(os.environ, PYTHONPATH=str(self.src_tree))
        env.pop("SITEMAPKIT_DRILL_KILL_AT", None)
        if kill_at is not None:
            env["SITEMAPKIT_DRILL_KILL_AT"] = str(kill_at)
        return env

    def write(
        self, src: Path, *, kill_at: int | None = None, patch: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        """One run; ``kill_at``: killed by the hook before that step; ``patch``: by a counter."""
        return subprocess.run(
            self.command(src, patch=patch),
            env=self.env(kill_at),
            capture_output=True,
            text=True,
            check=False,
        )

    def kill_after(self, src: Path, seconds: float) -> int:
        """Start a run and SIGKILL it after ``seconds``; its exit status (-9: killed)."""
        proc = subprocess.Popen(
            self.command(src),
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        return proc.returncode

    def timed(self, src: Path) -> float:
        start = time.perf_counter()
        done = self.write(src)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return time.perf_counter() - start


def snapshot(out: Path, state: Path | None) -> Path:
    """Keep the folder, its manifest and the state file, to put them back (:func:`restore`)."""
    keep = out.parent / f"{out.name}.drill-keep"
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir()
    shutil.copytree(out, keep / "out", copy_function=shutil.copy2)
    for p in out.parent.glob(f".{out.name}.sitemapkit.*"):
        shutil.copy2(p, keep / p.name)
    if state is not None:
        (keep / "state").mkdir()
        for p in _state_files(state):  # the SQLite file, the URL file and cache beside it
            if p.is_dir():
                shutil.copytree(p, keep / "state" / p.name, copy_function=shutil.copy2)
            else:
                shutil.copy2(p, keep / "state" / p.name)
    return keep


def _state_files(state: Path) -> list[Path]:
    """The state file and what it keeps beside it (its URL file, a cache folder)."""
    return list(state.parent.glob(state.name + "*"))


def restore(keep: Path, out: Path, state: Path | None) -> None:
    shutil.rmtree(out)
    for p in out.parent.glob(f".{out.name}.sitemapkit*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    shutil.copytree(keep / "out", out, copy_function=shutil.copy2)
    for p in keep.glob(f".{out.name}.sitemapkit.*"):
        shutil.copy2(p, out.parent / p.name)
    if state is not None:
        for p in _state_files(state):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        for p in (keep / "state").iterdir():
            if p.is_dir():
                shutil.copytree(p, state.parent / p.name, copy_function=shutil.copy2)
            else:
                shutil.copy2(p, state.parent / p.name)


_FORKED = """
import sitemapkit as sk
from sitemapkit.io.sources import write_inputs
from sitemapkit.writer import parallel
real = parallel.write_forked
def forked(*a):
    took = real(*a)
    print("forked:", took, flush=True)
    return took
parallel.write_forked = forked
with sk.SitemapWriter({out!r}, base_url="https://example.com/", max_urls={max_urls},
                      gzip={gzip}) as w:
    write_inputs(w, [{src!r}], parallel_min=0)
"""

#: For a tree without the drill hook: SIGKILL at the N-th publish step, counted from outside.
_PATCH = """
import os, pathlib, signal
_out, _at, _n = {out!r}, {at}, [0]
def _tick(path):
    p = os.path.abspath(str(path))
    if os.path.dirname(p) == _out or os.path.basename(p) == ".publish":
        _n[0] += 1
        if _n[0] == _at:
            os.kill(os.getpid(), signal.SIGKILL)
_replace, _unlink = os.replace, pathlib.Path.unlink
def replace(src, dst, *a, **k):
    _tick(dst)
    return _replace(src, dst, *a, **k)
def unlink(self, *a, **k):
    _tick(self)
    return _unlink(self, *a, **k)
os.replace, pathlib.Path.unlink = replace, unlink
"""


def only_the_set(out: Path) -> None:
    """The folder holds the files its ``sitemap.xml`` names and nothing else of ours."""
    root = _parse(out / "sitemap.xml")
    names = {"sitemap.xml"} | {
        urlsplit(e.text or "").path.rsplit("/", 1)[-1]
        for e in root.iterfind(f"{_NS}sitemap/{_NS}loc")
    }
    extra = sorted(
        p.name for p in out.iterdir() if p.name.startswith("sitemap") and p.name not in names
    )
    if extra:
        raise Mixed(f"files no index names are left in the folder: {extra}")


def kill_at_every_step(
    run: Run,
    src: Path,
    named: dict[str, Sequence[Entry]],
    *,
    patch: bool = False,
    after: Callable[[int, str], None] | None = None,
) -> list[tuple[int, str, int]]:
    """Kill ``write`` of ``src`` before each publish step in turn, from the folder as it is
    (restored after each kill). Per kill: (step, the set the folder showed or why it was
    mixed, staging folders left); ``after(step, shown)`` runs on the killed folder. Stops
    at the first run that completes (the folder is left as it made it)."""
    keep = snapshot(run.out, run.state)
    got = []
    try:
        for n in range(1, 1000):
            done = run.write(src, patch=n) if patch else run.write(src, kill_at=n)
            if done.returncode == 0:
                break
            if done.returncode != -signal.SIGKILL:
                raise RuntimeError(f"step {n}: exit {done.returncode}: {done.stderr}")
            try:
                shown = which(run.out, named)
            except Mixed as exc:
                shown = f"mixed: {exc}"
            got.append((n, shown, len(staging(run.out))))
            if after is not None:
                after(n, shown)
            restore(keep, run.out, run.state)
    finally:
        shutil.rmtree(keep, ignore_errors=True)
    return got
