#!/usr/bin/env bash
# test-array.sh SWEEP_BIN GRID WORKDIR
# End-to-end check (cluster must be running, see start-cluster.sh):
# run GRID as a 4-task Slurm job array, merge the shards, run the same grid
# on this machine alone, and require `sweep compare` to call them equal.
# Env: SLURM_CI_WAIT_TIMEOUT (default 600 s) bounds the wait for the array.
# Prints a final "PASS: ..." or "FAIL: ..." line; exit 0 iff PASS.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh disable=SC1091
. "$HERE/common.sh"

if [ $# -ne 3 ]; then
    echo "usage: $0 SWEEP_BIN GRID WORKDIR" >&2
    exit 2
fi
TASKS=4
WAIT_TIMEOUT="${SLURM_CI_WAIT_TIMEOUT:-600}"
T0=$SECONDS

fail() { echo "FAIL: slurm array test: $*"; exit 1; }

# Absolute paths: the sbatch script runs them from Slurm's spool, not from here.
SWEEP="$1"
case "$SWEEP" in
    */*) ;;
    *) SWEEP="$(command -v "$SWEEP" || true)" ;;
esac
if [ -z "$SWEEP" ] || [ ! -x "$SWEEP" ]; then fail "sweep binary '$1' not found or not executable"; fi
SWEEP="$(realpath "$SWEEP")"
[ -f "$2" ] || fail "grid file '$2' not found"
GRID="$(realpath "$2")"
mkdir -p "$3"
WORKDIR="$(realpath "$3")"
ARRAY="$WORKDIR/array"
SINGLE="$WORKDIR/single"

sinfo -h >/dev/null 2>&1 \
    || fail "no Slurm cluster answers (SLURM_CONF=${SLURM_CONF:-unset}); run ci/slurm/start-cluster.sh first"

# Fresh output directories, so no shard of an earlier run can be merged.
for d in "$ARRAY" "$SINGLE"; do
    if [ -e "$d" ]; then
        log "removing previous test output $d"
        rm -rf -- "$d"
    fi
    mkdir -p "$d"
done

# 1. Generate the array script.
log "generating the sbatch script: $SWEEP slurm $GRID --tasks $TASKS --out $ARRAY"
gen_out="$("$SWEEP" slurm "$GRID" --tasks "$TASKS" --out "$ARRAY")" || fail "'sweep slurm' exited with $?"
printf '%s\n' "$gen_out"
SCRIPT="$(printf '%s\n' "$gen_out" | sed '/^[[:space:]]*$/d' | tail -n 1)"
if [ -z "$SCRIPT" ] || [ ! -f "$SCRIPT" ]; then
    fail "last line of 'sweep slurm' output is not a file: '$SCRIPT'"
fi
[ "$(realpath "$SCRIPT")" = "$ARRAY/slurm/sweep.sbatch" ] \
    || log "note: script is $SCRIPT (expected $ARRAY/slurm/sweep.sbatch)"
grep -Eq '^#SBATCH[[:space:]]+(--array[=[:space:]]|-a[[:space:]])' "$SCRIPT" \
    || fail "$SCRIPT has no '#SBATCH --array' line"

# Task logs go to $ARRAY/slurm/task-%A_%a.out; add that ourselves if the
# script does not say where its output goes.
sbatch_args=(--parsable)
if ! grep -Eq '^#SBATCH[[:space:]]+(--output[=[:space:]]|-o[[:space:]])' "$SCRIPT"; then
    sbatch_args+=(--output="$ARRAY/slurm/task-%A_%a.out")
fi

# 2. Submit it and wait for every task.
sub_out="$(cd "$ARRAY" && sbatch "${sbatch_args[@]}" "$SCRIPT" 2>&1)" || fail "sbatch failed: $sub_out"
JOB="${sub_out%%;*}"    # --parsable prints "jobid" or "jobid;cluster"
case "$JOB" in '' | *[!0-9]*) fail "unexpected sbatch output: $sub_out" ;; esac
log "submitted job array $JOB"
t=$SECONDS
bash "$HERE/wait-jobs.sh" "$JOB" "$WAIT_TIMEOUT" || fail "job array $JOB did not succeed (see above)"
ntasks="$(scontrol -o show job "$JOB" | grep -c 'ArrayTaskId=' || true)"
[ "$ntasks" -eq "$TASKS" ] || fail "job $JOB ran $ntasks array tasks, expected $TASKS"
log "array done in $((SECONDS - t)) s"

# 3. Merge the shards.
log "merging: $SWEEP merge $ARRAY"
"$SWEEP" merge "$ARRAY" || fail "'sweep merge' exited with $?"
[ -f "$ARRAY/manifest.json" ] || fail "'sweep merge' wrote no $ARRAY/manifest.json"

# 4. The same grid on this machine alone.
log "single-machine run: $SWEEP run $GRID --out $SINGLE --no-report --jobs 2"
t=$SECONDS
"$SWEEP" run "$GRID" --out "$SINGLE" --no-report --jobs 2 || fail "single-machine 'sweep run' exited with $?"
log "single run done in $((SECONDS - t)) s"

# 5. Compare the two runs tables.
log "comparing: $SWEEP compare $ARRAY $SINGLE"
if "$SWEEP" compare "$ARRAY" "$SINGLE"; then
    echo "PASS: slurm array test: $TASKS-task job array $JOB equals the single-machine run ($((SECONDS - T0)) s)"
else
    fail "'sweep compare' found differences between $ARRAY and $SINGLE"
fi
