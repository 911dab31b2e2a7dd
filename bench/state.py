"""Incremental runs (``write --state``) beside the plain write, whole process, side by side.

Usage: python bench/state.py [--data CSV] [--runs R] [--candidate SITEMAPKIT ...]

Rows, for each candidate (a ``sitemapkit`` executable; give two to compare versions):

- ``plain``: ``write CSV -o OUT --base-url B --gzip`` (OUT removed first);
- ``state, first run``: the same with ``--state S`` on a new state file;
- ``state, nothing changed``: the same again;
- ``state, 1 % changed``: a copy of the CSV where 2,000 rows of the second shard (input
  lines 60,001-62,000) have another lastmod (the state's cache takes the other rows);
- ``state, 1 % other URLs``: the first CSV again, but those 2,000 rows with other locs (2,000
  removed, 2,000 added: the run merges with the state, as any change of the URLs does).

Each round runs every row of every candidate in turn (the candidates alternate); the
table gives the median of R rounds (wall, and CPU of the process and its children), the
ratios to the same candidate's plain write, the
shards the run rewrote (from its output) and the load before and after (``uptime``). The
data is the peer bench's 200,000-URL CSV (``/work/shared/bench/gen_data.py`` makes it).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

BASE = "https://www.example.com/"
ROWS = (
    "plain",
    "state, first run",
    "state, nothing changed",
    "state, 1 % changed",
    "state, 1 % other URLs",
)


def changed_copy(
    src: Path, dst: Path, first: int = 60_000, count: int = 2_000, *, locs: bool = False
) -> None:
    """``src`` with a new lastmod on ``count`` rows from data row ``first`` (0-based), or
    (``locs``) with other locs there."""
    with open(src, "rb") as fh, open(dst, "wb") as out:
        out.write(fh.readline())
        for i, line in enumerate(fh):
            if first <= i < first + count and locs:
                loc, _, rest = line.partition(b",")
                line = b"%s-moved,%s" % (loc, rest)
            elif first <= i < first + count:
                loc, _, rest = line.split(b",", 2)
                line = b"%s,2025-01-02T03:04:05+00:00,%s" % (loc, rest)
            out.write(line)


def load() -> str:
    return os.getloadavg().__repr__()


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)  # the forked workers too (waited for)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one run, and the shards it rewrote."""
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took, used = time.perf_counter() - start, _cpu() - cpu
    if done.returncode:
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr}")
    found = re.search(r"rewritten: (.*)", done.stdout)
    return took, used, found.group(1).strip() if found else ""


def one_round(
    exe: str, data: Path, changed: Path, moved: Path, work: Path
) -> list[tuple[float, float, str]]:
    out, state = work / "out", work / "state.sqlite"
    shutil.rmtree(out, ignore_errors=True)
    for p in work.glob("state.sqlite*"):  # the state, its URL file and cache folder
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    write = [exe, "write", "-o", str(out), "--base-url", BASE, "--gzip"]
    results = [timed([*write, str(data)])]
    shutil.rmtree(out, ignore_errors=True)
    with_state = [*write, "--state", str(state)]
    results.append(timed([*with_state, str(data)]))
    results.append(timed([*with_state, str(data)]))
    results.append(timed([*with_state, str(changed)]))
    timed([*with_state, str(data)])  # back to the first input (not counted)
    results.append(timed([*with_state, str(moved)]))
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/bench/data-200000/input/urls.csv")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--candidate", action="append", default=[])
    ap.add_argument("--work", default=None, help="a folder for the output (a new temp folder)")
    a = ap.parse_args()
    cands = a.candidate or [str(Path(__file__).resolve().parent.parent / ".venv/bin/sitemapkit")]
    work = Path(a.work or tempfile.mkdtemp(prefix="skstate-"))
    data = Path(a.data)
    changed = work / "changed.csv"
    changed_copy(data, changed)
    moved = work / "moved.csv"
    changed_copy(data, moved, locs=True)
    before = load()
    times: dict[str, list[list[float]]] = {c: [[] for _ in ROWS] for c in cands}
    cpus: dict[str, list[list[float]]] = {c: [[] for _ in ROWS] for c in cands}
    rewritten: dict[str, list[str]] = {c: [""] * len(ROWS) for c in cands}
    for _ in range(a.runs):
        for c in cands:
            folder = work / f"c{cands.index(c)}"
            folder.mkdir(exist_ok=True)
            for k, (took, used, names) in enumerate(one_round(c, data, changed, moved, folder)):
                times[c][k].append(took)
                cpus[c][k].append(used)
                rewritten[c][k] = names
    after = load()
    print(f"{data} ({a.runs} rounds, medians; load before {before}, after {after})")
    for c in cands:
        plain = statistics.median(times[c][0])
        plain_cpu = statistics.median(cpus[c][0])
        print(f"\n{c}")
        for k, row in enumerate(ROWS):
            med, cpu = statistics.median(times[c][k]), statistics.median(cpus[c][k])
            runs = " ".join(f"{t:.2f}" for t in times[c][k])
            print(
                f"  {row:24s} {med:6.2f} s {med / plain:5.2f}x  CPU {cpu:5.2f} s "
                f"{cpu / plain_cpu:5.2f}x  [{runs}]  {rewritten[c][k]}"
            )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
