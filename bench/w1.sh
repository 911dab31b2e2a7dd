#!/bin/sh
# W1 of issue #15: the shared harness's W1 pairs (sitemapkit write --gzip beside the
# hand-written stdlib writer and xml-sitemap-writer) for one or more builds, one harness
# call per build and size, the builds alternated, at 200,000 and 1,000,000 URLs.
#
#   bench/w1.sh [--work DIR] [--runs N] [--sizes "200000 1000000"] BUILD...
#
# BUILD is a project folder with its .venv (e.g. . and a worktree of main); the work
# folder (default ./.bench-cache) holds the harness's venv and data, as run_peers.sh's.
# Prints each call's W1 rows: the ratio candidate/reference (< 1: faster), the walls.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd -P)
HARNESS="$HERE/../../shared/bench/run_peers.sh"
WORK=${BENCH_WORK:-$PWD/.bench-cache}
RUNS=3
SIZES="200000 1000000"
while [ $# -gt 0 ]; do
  case "$1" in
    --work) WORK=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: bench/w1.sh [--work DIR] [--runs N] [--sizes S] BUILD..." >&2; exit 2; }
for size in $SIZES; do
  for build in "$@"; do
    bin=$(cd "$build" && pwd -P)/.venv/bin/sitemapkit
    echo "== $size URLs, $build (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    if [ "$size" = 1000000 ]; then sz=""; else sz="--size $size"; fi
    # shellcheck disable=SC2086
    "$HARNESS" --work "$WORK" --candidate "$bin" --quick-candidate --runs "$RUNS" --only W1 $sz \
      2>&1 | grep -E '^\| W1 \| '
    if [ "$size" = 1000000 ]; then out="$WORK/out"; else out="$WORK/out-$size"; fi
    # medians of wall and CPU per row, and the bytes each row's last run wrote
    python3 - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
for case in json.load(open(os.path.join(out, "quick-candidate.json")))["cases"]:
    runs = case["runs"]
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    folder = case["argv"][case["argv"].index("-o") + 1] if "-o" in case["argv"] else (
        case["argv"][case["argv"].index("--out") + 1] if "--out" in case["argv"] else None)
    size = sum(e.stat().st_size for e in os.scandir(folder) if e.name.endswith(".gz")) if folder and os.path.isdir(folder) else 0
    print(f"   {case['name'][:48]:48s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  gz {size:,} B")
PY
  done
done
