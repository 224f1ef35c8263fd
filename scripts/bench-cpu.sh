#!/usr/bin/env bash
# The whole CPU time of a keep-alive request, user and kernel, of the
# example servers: what a request really costs a machine, where
# `scripts/perf.sh` counts the user-space instructions only (about 70% of
# a keep-alive request's CPU is in the kernel: the read, the write, the
# wait).
#
#   scripts/bench-cpu.sh                        # the work tree's servers
#   BASE=6644d71 scripts/bench-cpu.sh           # and that commit's, beside them
#   SERVERS=blocking_server ROUNDS=5 N=200000 scripts/bench-cpu.sh
#
# Each run starts a server and sends 1,000 and then N sequential
# curl-like `GET /` requests on one connection from the client perf.sh
# uses too (scripts/keepalive_client.py), which reads the server's CPU
# time from /proc (every thread's `schedstat`: nanoseconds on a CPU, user
# and kernel) before and after the N; the figure is the difference
# divided by N. ROUNDS rounds, the trees alternating inside each round, so
# that a change in the machine's load falls on both alike; the medians
# are compared. On a shared machine the rounds of one build differ by up
# to 15%: use at least 5, and take a difference smaller than their spread
# for none.
#
# Linux only (/proc); needs python3.
set -euo pipefail
# --help: the comment above, which says what this measures and how.
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi
shopt -s inherit_errexit

cd "$(dirname "$0")/.."
N=${N:-100000}
ROUNDS=${ROUNDS:-3}
SERVERS=${SERVERS:-hello_server blocking_server}
BASE=${BASE:-}
PORT=${PORT:-18295}
TARGET=${CARGO_TARGET_DIR:-target}

command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 1; }
[ -r /proc/self/schedstat ] || { echo "needs /proc/PID/schedstat (Linux)" >&2; exit 1; }

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck disable=SC2086
examples=$(printf -- '--example %s ' $SERVERS)
trees=(work)
if [ -n "$BASE" ]; then
    # A target directory of its own, as perf.sh's (cargo names a package's
    # artifacts by its path in the workspace).
    mkdir -p "$WORK/base-src" "$WORK/base"
    git archive "$BASE" | tar -x -C "$WORK/base-src"
    base_target=$(realpath -m "$TARGET/perf-base")
    # shellcheck disable=SC2086
    (cd "$WORK/base-src" && CARGO_TARGET_DIR="$base_target" cargo build --release $examples >&2)
    for s in $SERVERS; do cp "$base_target/release/examples/$s" "$WORK/base/"; done
    trees=(base work)
fi
# shellcheck disable=SC2086
cargo build --release $examples >&2
mkdir -p "$WORK/work"
for s in $SERVERS; do cp "$TARGET/release/examples/$s" "$WORK/work/"; done

# One run: nanoseconds of server CPU per request.
one_run() { # binary
    "$1" --addr "127.0.0.1:$PORT" >/dev/null 2>"$WORK/err" &
    SERVER_PID=$!
    local ok=
    for _ in $(seq 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), timeout=1).close()" 2>/dev/null && ok=1 && break
        sleep 0.05
    done
    [ -n "$ok" ] || { echo "the server did not start:" >&2; cat "$WORK/err" >&2; exit 1; }
    # Warmed up first (the first head's names learned, buffers grown).
    local ns
    ns=$(python3 scripts/keepalive_client.py "$PORT" "$N" 0 "$SERVER_PID" 1000)
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" || true
    SERVER_PID=
    echo "$ns"
}

echo "## Server CPU per keep-alive request, user + kernel (ns; $N requests, $ROUNDS rounds)"
echo
declare -A runs
for r in $(seq "$ROUNDS"); do
    for s in $SERVERS; do
        for t in "${trees[@]}"; do
            runs[$s.$t]+="$(one_run "$WORK/$t/$s") "
        done
    done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
if [ -n "$BASE" ]; then
    echo "| server | work tree: median (rounds) | at $BASE: median (rounds) | change |"
    echo "|---|---|---|---|"
    for s in $SERVERS; do
        w=$(median <<<"${runs[$s.work]}")
        b=$(median <<<"${runs[$s.base]}")
        change=$(awk -v a="$b" -v b="$w" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }')
        echo "| $s | $w (${runs[$s.work]% }) | $b (${runs[$s.base]% }) | $change |"
    done
else
    echo "| server | median (rounds) |"
    echo "|---|---|"
    for s in $SERVERS; do
        echo "| $s | $(median <<<"${runs[$s.work]}") (${runs[$s.work]% }) |"
    done
fi
echo
echo "$(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(rustc --version), $(date -u +%F)"
