#!/usr/bin/env bash
# wait-jobs.sh JOBID [TIMEOUT_S]
# Wait until Slurm job JOBID (every task, if it is an array) has finished,
# then check each task's exit code. Exit 0 iff all tasks COMPLETED with 0:0.
# Exit 1 if a task failed, 124 on timeout (jobs are left running), 2 on usage.
# Polls every second on purpose: `sbatch --wait` backs off to 2, 10, 42 s...
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh disable=SC1091
. "$HERE/common.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 JOBID [TIMEOUT_S]" >&2
    exit 2
fi
JOB="$1"
TIMEOUT="${2:-600}"
case "$TIMEOUT" in '' | *[!0-9]*) echo "TIMEOUT_S must be a whole number of seconds" >&2; exit 2 ;; esac

# States after which a task will not run again (anything else is still active).
is_final() {
    case "$1" in
        COMPLETED | FAILED | CANCELLED* | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE) return 0 ;;
        *) return 1 ;;
    esac
}

# --- poll ------------------------------------------------------------------------
# `-t all` so the answer does not depend on whether this squeue hides finished
# jobs; we decide ourselves which states are final.
start=$SECONDS
deadline=$((SECONDS + TIMEOUT))
errors=0
last=""
while :; do
    if out="$(squeue -h -r -t all -j "$JOB" -o '%i %T' 2>&1)"; then
        errors=0
        active="$(while read -r id st; do
            [ -n "${id:-}" ] || continue
            is_final "$st" || echo "$id $st"
        done <<<"$out")"
        [ -n "$active" ] || break
        # One progress line whenever the set of active tasks changes.
        summary="$(awk '{print $2}' <<<"$active" | sort | uniq -c | awk '{printf "%s%s=%s", sep, $2, $1; sep=" "}')"
        if [ "$summary" != "$last" ]; then
            log "job $JOB after $((SECONDS - start)) s: $summary"
            last="$summary"
        fi
    else
        # The job may have been purged (older than MinJobAge) or slurmctld is
        # briefly busy: retry a few times before moving on to the check.
        errors=$((errors + 1))
        if [ "$errors" -ge 5 ]; then
            log "squeue keeps failing for job $JOB: $out"
            break
        fi
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        log "TIMEOUT: job $JOB still active after ${TIMEOUT}s:" >&2
        squeue -r -j "$JOB" -o '%.18i %.10T %.10M %R' >&2 || true
        exit 124
    fi
    sleep 1
done
[ "$errors" -gt 0 ] || log "job $JOB left the queue after $((SECONDS - start)) s; checking exit codes"

# --- check exit codes --------------------------------------------------------------
# One line per task; finished tasks stay here for MinJobAge (3600 s in our conf).
if ! records="$(scontrol -o show job "$JOB" 2>&1)" || [ -z "$records" ]; then
    log "FAIL: scontrol does not know job $JOB (older than MinJobAge?): $records" >&2
    exit 1
fi

field() { grep -o "\(^\| \)$1=[^ ]*" <<<"$2" | head -n1 | sed "s/^ *$1=//"; }

ntask=0
nfail=0
while IFS= read -r rec; do
    [ -n "$rec" ] || continue
    ntask=$((ntask + 1))
    jobid="$(field JobId "$rec")"
    arr="$(field ArrayJobId "$rec")"
    idx="$(field ArrayTaskId "$rec")"
    st="$(field JobState "$rec")"
    ec="$(field ExitCode "$rec")"
    name="$jobid"
    [ -z "$idx" ] || name="${arr}_${idx}"
    if [ "$st" = "COMPLETED" ] && [ "$ec" = "0:0" ]; then
        echo "  task $name: $st exit=$ec"
        continue
    fi
    nfail=$((nfail + 1))
    echo "  task $name: FAILED state=$st exit=$ec reason=$(field Reason "$rec")"
    # Expand the filename patterns scontrol may leave in (it usually does not).
    files=()
    for key in StdOut StdErr; do
        f="$(field "$key" "$rec")"
        f="${f//%A/$arr}"; f="${f//%a/$idx}"; f="${f//%j/$jobid}"
        if [ -z "$f" ] || [ "$f" = /dev/null ]; then continue; fi
        [ "${#files[@]}" -gt 0 ] && [ "${files[0]}" = "$f" ] && continue
        files+=("$f")
    done
    for f in "${files[@]}"; do
        if [ -f "$f" ]; then
            echo "  ----- last 20 lines of $f"
            tail -n 20 "$f" | sed 's/^/  | /'
        else
            echo "  (no file $f)"
        fi
    done
done <<<"$records"

if [ "$nfail" -gt 0 ]; then
    log "FAIL: $nfail of $ntask task(s) of job $JOB failed" >&2
    exit 1
fi
log "OK: all $ntask task(s) of job $JOB completed with exit code 0"
