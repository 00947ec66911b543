#!/usr/bin/env bash
# test-sigterm.sh SWEEP_BIN GRID WORKDIR
# Slurm stops a task with SIGTERM (time limit, scancel, preemption). Run a
# longer copy of GRID (more seeds) as a 2-task job array, send SIGTERM to
# every task while it runs, and require of each task: it exited 143, said how
# to resume, and left its manifest `interrupted` with what it had finished
# written. Then resubmit the same script (it passes --resume), merge, and
# require `sweep compare` to call the result equal to a single-machine run.
# Cluster must be running (start-cluster.sh). Prints a final PASS or FAIL line.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh disable=SC1091
. "$HERE/common.sh"

if [ $# -ne 3 ]; then
    echo "usage: $0 SWEEP_BIN GRID WORKDIR" >&2
    exit 2
fi
TASKS=2
WAIT_TIMEOUT="${SLURM_CI_WAIT_TIMEOUT:-600}"
T0=$SECONDS

fail() { echo "FAIL: slurm SIGTERM test: $*"; exit 1; }

SWEEP="$(realpath "$1")"
[ -x "$SWEEP" ] || fail "sweep binary '$1' not found or not executable"
[ -f "$2" ] || fail "grid file '$2' not found"
mkdir -p "$3"
WORKDIR="$(realpath "$3")"
ARRAY="$WORKDIR/array"
SINGLE="$WORKDIR/single"
for d in "$ARRAY" "$SINGLE"; do
    rm -rf -- "$d"
    mkdir -p "$d"
done

# The same grid with 2,000 seeds (8,000 runs a task, a part file every
# 1,000 runs or 5 s): long enough to be stopped in the middle however fast
# the machine, since the signal goes at the first part, not after a time.
GRID="$WORKDIR/sigterm.toml"
sed -e 's/^name = .*/name = "ci-sigterm"/' \
    -e 's/^seeds = .*/seeds = { first = 1, count = 2000 }/' \
    -e 's|^scenario = "\([^"]*\.toml\)"|scenario = "'"$(dirname "$(realpath "$2")")"'/\1"|' \
    "$2" >"$GRID"

gen_out="$("$SWEEP" slurm "$GRID" --tasks "$TASKS" --out "$ARRAY")" || fail "'sweep slurm' exited with $?"
SCRIPT="$(printf '%s\n' "$gen_out" | sed '/^[[:space:]]*$/d' | tail -n 1)"
[ -f "$SCRIPT" ] || fail "last line of 'sweep slurm' output is not a file: '$SCRIPT'"

submit() {
    local out
    out="$(cd "$ARRAY" && sbatch --parsable "$SCRIPT" 2>&1)" || fail "sbatch failed: $out"
    out="${out%%;*}"
    case "$out" in '' | *[!0-9]*) fail "unexpected sbatch output: $out" ;; esac
    printf '%s\n' "$out"
}

# 1. Submit; once every task has written its first part of runs (so each
#    has work done and work left), SIGTERM the batch step. A fixed wait
#    here let a fast machine finish the whole array before the signal.
JOB="$(submit)"
log "submitted job array $JOB"
deadline=$((SECONDS + WAIT_TIMEOUT))
for i in $(seq 0 $((TASKS - 1))); do
    until [ -f "$ARRAY/runs/part-s${i}of${TASKS}-000000.parquet" ]; do
        [ $SECONDS -lt $deadline ] || fail "task $i never wrote its first part"
        sleep 0.1
    done
done
log "scancel --batch --signal=TERM $JOB"
scancel --batch --signal=TERM "$JOB" || fail "scancel exited with $?"
bash "$HERE/wait-jobs.sh" "$JOB" "$WAIT_TIMEOUT" >/dev/null 2>&1 || true

for i in $(seq 0 $((TASKS - 1))); do
    logf="$(ls "$ARRAY"/slurm/task-"${JOB}"_"$i".out 2>/dev/null || true)"
    [ -n "$logf" ] || fail "no log of task $i"
    manifest="$ARRAY/manifest-s${i}of${TASKS}.json"
    if grep -q '"status": "complete"' "$manifest"; then
        fail "task $i finished before SIGTERM reached it: make the grid longer"
    fi
    grep -q '"status": "interrupted"' "$manifest" || { cat "$logf"; fail "task $i: manifest not interrupted"; }
    grep -q 'terminated (SIGTERM)' "$logf" || { cat "$logf"; fail "task $i: no word of SIGTERM"; }
    grep -q 'Resume with:' "$logf" || { cat "$logf"; fail "task $i: no resume command"; }
    code="$(scontrol -o show job "${JOB}_$i" 2>/dev/null | grep -o 'ExitCode=[0-9:]*' || true)"
    log "task $i stopped: $(grep -c . "$logf") log lines, ${code:-ExitCode unknown}"
    case "$code" in '' | ExitCode=143:0) ;; *) fail "task $i: $code, expected 143:0" ;; esac
done

# 2. Resubmit: every task resumes and completes.
JOB2="$(submit)"
log "resubmitted as job array $JOB2"
bash "$HERE/wait-jobs.sh" "$JOB2" "$WAIT_TIMEOUT" || fail "resubmitted array $JOB2 did not succeed"
"$SWEEP" merge "$ARRAY" --no-report || fail "'sweep merge' exited with $?"

# 3. The same grid on this machine alone, and the two tables compared.
"$SWEEP" run "$GRID" --out "$SINGLE" --no-report --jobs 2 || fail "single-machine run exited with $?"
if "$SWEEP" compare "$ARRAY" "$SINGLE"; then
    echo "PASS: slurm SIGTERM test: $TASKS tasks stopped by SIGTERM and resubmitted equal the single-machine run ($((SECONDS - T0)) s)"
else
    fail "'sweep compare' found differences between $ARRAY and $SINGLE"
fi
