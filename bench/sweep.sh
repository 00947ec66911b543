#!/usr/bin/env bash
# Sweep benchmarks (figures in the README):
#   1. overhead of planning, bookkeeping and Parquet on grids/ch37-window.toml
#      ("simulation N% of worker time" on one thread),
#   2. speed-up from --jobs 1 to --jobs 2 on the same grid,
#   3. peak RSS of 1,000 vs 50,000 runs (short runs, same scenario).
# Usage: bash bench/sweep.sh   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p sweep
SWEEP="$PWD/target/release/sweep"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

wall() { /usr/bin/time -f "%e s wall, %M KB peak RSS" "$@" 2>&1 >/dev/null | grep -E "runs in|wall"; }

echo "== ch37-window, --jobs 1"
wall "$SWEEP" run grids/ch37-window.toml --out "$WORK/w1" --jobs 1 --no-report
echo "== ch37-window, --jobs 2"
wall "$SWEEP" run grids/ch37-window.toml --out "$WORK/w2" --jobs 2 --no-report

for n in 1000 50000; do
  cat > "$WORK/mem-$n.toml" <<GRID
name = "mem-$n"
scenario = "ch37"
seeds = { first = 1, count = $n }
[set]
strategy = "protected"
"client.duration_s" = 5
horizon_s = 6
"svc_b.slow.start_s" = 1
"svc_b.slow.duration_s" = 2
GRID
  echo "== $n short runs"
  wall "$SWEEP" run "$WORK/mem-$n.toml" --out "$WORK/mem-$n" --no-report
done
