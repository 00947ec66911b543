#!/usr/bin/env bash
# read_only_merge.sh SWEEP_BIN GRID WORKDIR
# A merge reads its source directories under a lock that keeps writers out
# (`Lock::reader`). Results archived read-only, or another user's, cannot
# be locked: there no writer of this user can run either, and the merge
# must read them anyway. Run as root (CI): two shards are written, made
# read-only, and merged by the unprivileged user `nobody`, for whom the
# lock files cannot be opened for writing; the merge must equal a
# single-machine run of the grid.
# Prints a final "PASS: ..." or "FAIL: ..." line; exit 0 iff PASS.
set -euo pipefail

fail() { echo "FAIL: read-only merge: $*"; exit 1; }
[ $# -eq 3 ] || { echo "usage: $0 SWEEP_BIN GRID WORKDIR" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || fail "must run as root (it writes as root and merges as nobody)"

WORK="$3"
rm -rf -- "$WORK"
mkdir -p "$WORK/out"
# `nobody` must reach the binary and the directories.
cp "$1" "$WORK/sweep"
cp "$2" "$WORK/grid.toml"
chmod 755 "$WORK" "$WORK/sweep"
cd "$WORK"

./sweep run grid.toml --shard 0/2 --out a --quiet --no-report
./sweep run grid.toml --shard 1/2 --out b --quiet --no-report
./sweep run grid.toml --out single --quiet --no-report
chmod -R a-w a b
chown nobody out

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
# The premise: `nobody` cannot open a source's lock file for writing.
if as_nobody sh -c ': >> a/.sweep.lock' 2>/dev/null; then
    fail "nobody can write a/.sweep.lock: the check would not reach the read-only path"
fi
as_nobody ./sweep merge a b --into out/merged --no-report \
    || fail "nobody's merge of the read-only shards exited with $?"
./sweep compare single out/merged || fail "the merge differs from the single-machine run"
echo "PASS: read-only shards merged by another user equal the single-machine run"
