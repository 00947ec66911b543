# Shared helpers for the ci/slurm scripts. Source it; do not run it.
# shellcheck shell=bash

SLURM_CI_DIR="${SLURM_CI_DIR:-/tmp/slurm-ci}"
# Clients (sinfo, sbatch, squeue, scontrol...) find the cluster through this.
# Only default it when the caller has not pointed SLURM_CONF somewhere else.
if [ -z "${SLURM_CONF:-}" ] && [ -f "$SLURM_CI_DIR/slurm.conf" ]; then
    export SLURM_CONF="$SLURM_CI_DIR/slurm.conf"
fi

log() { printf '[slurm-ci %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "ERROR: $*" >&2; exit 1; }

# pid_alive PIDFILE NAME: true if PIDFILE names a live process whose
# command name is NAME (guards against a recycled PID).
pid_alive() {
    local pidfile="$1" name="$2" pid
    [ -s "$pidfile" ] || return 1
    pid="$(tr -dc '0-9' 2>/dev/null <"$pidfile")"
    [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]
}

# close_fds: close every descriptor above 2 of the current (sub)shell.
# Daemons started from here must not inherit the caller's pipes or lock
# files, otherwise whoever waits on those (a CI step) waits forever.
close_fds() {
    local fd
    for fd in /proc/"$BASHPID"/fd/*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ] 2>/dev/null; then
            eval "exec $fd>&-" 2>/dev/null || true
        fi
    done
}
