"""The publish drills of issue #16 §1, full size: does a kill -9 ever leave a mixed set?

    .venv/bin/python bench/publish.py [--urls 150000] [--kills 60] [--seeds 1 2]
        [--modes plain state forked] [--base SRC] [--patch]

Set A has ``--urls`` URLs; set B drops a fifth, changes a tenth, adds new ones (8 <-> 7
shards; ``tests/drill.py``). For each mode (``plain``; ``state``: ``--state``; ``forked``:
an input over 16 MiB, its paths padded, so that ``write`` takes the forked path) and each
direction (A over B, B over A):

* **steps**: ``write`` killed with SIGKILL just before each publish step in turn (the
  writer's drill hook; ``--patch``, or a ``--base`` tree without the hook: counted from
  outside, each rename into the folder or of the journal and each removal in it), the
  folder put back after each;
* **random**: ``--kills`` kills at moments drawn uniformly over a run (its time measured
  first), per seed, writing A and B in turn; after each kill the next run completes.

Right after each kill the folder is read as a reader who follows ``sitemap.xml`` does: the
set it shows (``old``, ``new``, or ``mixed``: a URL listed twice, missing, or a file the
index names not there), and the staging folders left beside it; after the next run, the
staging folders left. ``--base SRC`` runs another source tree (``PYTHONPATH=SRC``: e.g.
a worktree of main, for the figures before).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.drill import (  # noqa: E402 - the drill lives beside the tests
    Mixed,
    Run,
    csv_text,
    kill_at_every_step,
    sets,
    staging,
    which,
)


def _shown(run: Run, named: dict[str, list[tuple[str, str]]], old: str) -> str:
    try:
        got = which(run.out, named)
    except Mixed as exc:
        return f"mixed ({exc})"
    return "old" if got == old else "new"


def steps(run: Run, srcs: dict[str, Path], old: str, new: str, patch: bool) -> str:
    shutil.rmtree(run.out, ignore_errors=True)
    if run.state is not None:
        run.state.unlink(missing_ok=True)
    run.write(srcs[old])
    left_after: list[int] = []

    def next_run(n: int, shown: str) -> None:
        done = run.write(srcs[new])
        left_after.append(len(staging(run.out)) if done.returncode == 0 else -1)

    kills = kill_at_every_step(run, srcs[new], _NAMED, patch=patch, after=next_run)
    shown = Counter(
        "mixed" if s.startswith("mixed") else ("old" if s == old else "new") for _, s, _ in kills
    )
    mixed = [f"step {n}: {s}" for n, s, _ in kills if s.startswith("mixed")]
    return (
        f"{len(kills)} kills: {shown['old']} old, {shown['new']} new, {shown['mixed']} mixed; "
        f"staging left after the kills {sum(k for *_, k in kills)}, after the next runs "
        f"{sum(left_after)}" + ("".join(f"\n      {m}" for m in mixed[:5]))
    )


def random_kills(run: Run, srcs: dict[str, Path], kills: int, seed: int) -> str:
    shutil.rmtree(run.out, ignore_errors=True)
    if run.state is not None:
        run.state.unlink(missing_ok=True)
    run.write(srcs["A"])
    full = run.timed(srcs["B"])
    rng = random.Random(seed)
    shown: Counter[str] = Counter()
    left_kill = left_next = 0
    mixed = []
    for k in range(kills):
        new = "A" if k % 2 == 0 else "B"  # the folder holds B first (the timed run)
        old = "B" if new == "A" else "A"
        at = rng.uniform(0, full)
        run.kill_after(srcs[new], at)
        s = _shown(run, _NAMED, old)
        shown[s.split(" ")[0]] += 1
        if s.startswith("mixed"):
            mixed.append(f"at {at:.2f} s: {s}")
        left_kill += len(staging(run.out))
        done = run.write(srcs[new])
        if done.returncode != 0 or which(run.out, _NAMED) != new:
            mixed.append(f"the next run after {at:.2f} s: exit {done.returncode}")
        left_next += len(staging(run.out))
    return (
        f"seed {seed}: {kills} kills over a {full:.1f} s run: {shown['old']} old, "
        f"{shown['new']} new, {shown['mixed']} mixed; staging left after the kills "
        f"{left_kill}, after the next runs {left_next}" + "".join(f"\n      {m}" for m in mixed[:5])
    )


_NAMED: dict[str, list[tuple[str, str]]] = {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--urls", type=int, default=150_000)
    ap.add_argument("--kills", type=int, default=60)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--modes", nargs="+", default=["plain", "state", "forked"])
    ap.add_argument("--drills", nargs="+", default=["steps", "random"])
    ap.add_argument("--directions", nargs="+", default=["A>B", "B>A"])
    ap.add_argument("--base", type=Path, help="another source tree (PYTHONPATH)")
    ap.add_argument("--patch", action="store_true", help="count steps from outside")
    args = ap.parse_args()
    tree = (args.base or ROOT / "src").resolve()
    patch = args.patch or args.base is not None
    max_urls = args.urls * 10 // 80
    print(f"tree {tree}, {args.urls:,} URLs, --max-urls {max_urls:,}, load {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="publish-drill-") as tmp:
        work = Path(tmp)
        for mode in args.modes:
            # the forked path needs an input over 16 MiB: long paths
            a, b = sets(args.urls, pad=110 if mode == "forked" else 0)
            _NAMED.clear()
            _NAMED.update({"A": a, "B": b})
            srcs = {"A": work / f"{mode}-a.csv", "B": work / f"{mode}-b.csv"}
            srcs["A"].write_text(csv_text(a))
            srcs["B"].write_text(csv_text(b))
            sizes = ", ".join(f"{k} {p.stat().st_size / 2**20:.1f} MiB" for k, p in srcs.items())
            state = work / "state.sqlite" if mode == "state" else None
            run = Run(work / "out", max_urls, state=state, src_tree=tree)
            print(f"\n{mode} ({sizes})")
            if "steps" in args.drills:
                for old, new in (d.split(">") for d in args.directions):
                    t = time.perf_counter()
                    got = steps(run, srcs, old, new, patch)
                    print(f"  steps {old}->{new}: {got} [{time.perf_counter() - t:.0f} s]")
            if "random" in args.drills:
                for seed in args.seeds:
                    t = time.perf_counter()
                    got = random_kills(run, srcs, args.kills, seed)
                    print(f"  random {got} [{time.perf_counter() - t:.0f} s]", flush=True)
            print(f"  load {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
