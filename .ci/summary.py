"""The branch coverage of the last test run: core file by file, then each package, then
the total. Run by `make test` after pytest; it fails (exit 1) when a package is below its
floor in FLOORS (core, the pure protocol logic, at 95 %).

One JSON report is read, so the per-package figures cost one analysis of the data, not one
per package; they are computed as coverage.py computes a total: covered lines and branches
over all lines and branches.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import coverage

ROOT = "src/sitemapkit/"
#: Branch coverage a package may not fall below (percent).
FLOORS = {"core": 95.0}


def main() -> None:
    cov = coverage.Coverage()
    cov.load()
    cov.report(include=[ROOT + "core/**"], skip_empty=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(out))
        files = json.loads(out.read_text())["files"]
    sums: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, data in files.items():
        s = data["summary"]
        part = name.removeprefix(ROOT).split("/", 1)[0].removesuffix(".py")
        for key in (part, "total"):
            sums[key][0] += s["covered_lines"] + s["covered_branches"]
            sums[key][1] += s["num_statements"] + s["num_branches"]
    print("\nbranch coverage by package:")
    low = []
    for key in sorted(sums, key=lambda k: (k == "total", k)):
        done, all_ = sums[key]
        percent = 100 * done / all_ if all_ else 100.0
        floor = FLOORS.get(key)
        print(f"  {key:<14} {percent:5.1f} %" + (f"  (floor {floor:.0f} %)" if floor else ""))
        if floor is not None and percent < floor:
            low.append(f"{key} {percent:.1f} % < {floor:.0f} %")
    sys.stdout.flush()
    if low:
        sys.exit("branch coverage below its floor: " + "; ".join(low) + " (add tests)")


if __name__ == "__main__":
    main()
