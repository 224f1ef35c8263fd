#!/usr/bin/env bash
# Memory per connection of hello_server, blocking_server, uring_server,
# hyper's hello (bench/hyper-hello), axum_server (an axum Router on the
# tower bridge) and the same Router on axum::serve (bench/axum-hello, as
# `axum`), side by side: the growth of the server's resident
# set (VmRSS) per connection held open, in three states:
#
#   idle       keep-alive connections that made one request and read the
#              response, then sit idle (10,000 by default);
#   half-head  connections that sent half a request head and stopped
#              (2,000 by default);
#   silent     connections that sent nothing (2,000 by default).
#
# Each measurement starts a fresh server, makes one request to warm it up,
# waits SETTLE seconds and reads VmRSS; opens the connections (one client
# process holds them all), waits SETTLE seconds again (the h1proto servers
# give an idle connection's buffers back after Config::release_after, 1 s)
# and reads VmRSS once more. Prints a table in KiB per connection.
#
#   scripts/bench-memory.sh
#   IDLE=4000 HALF=1000 SILENT=1000 scripts/bench-memory.sh
#   SERVERS="hello_server hyper" MODES="idle" scripts/bench-memory.sh
#   SERVERS="axum_server axum" MODES="idle" scripts/bench-memory.sh
#
# Needs python3 (the client) and an open-file hard limit above IDLE plus a
# few hundred (the script raises the soft limit of itself and the servers).
# RSS counts the server's heap, its stacks (a thread per connection for
# blocking_server) and whatever the allocator keeps; not the kernel's
# socket buffers.
set -euo pipefail
# --help: the comment above, which says what this measures and how.
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi

cd "$(dirname "$0")/.."
IDLE=${IDLE:-10000}
HALF=${HALF:-2000}
SILENT=${SILENT:-2000}
SETTLE=${SETTLE:-2.5}
SERVERS=${SERVERS:-hello_server blocking_server uring_server hyper axum_server axum}
MODES=${MODES:-idle half-head silent}
PORT=${PORT:-18090}
TARGET=${CARGO_TARGET_DIR:-target}

command -v python3 >/dev/null || { echo "python3 is needed (the client)" >&2; exit 1; }

need=$(( (IDLE > HALF ? (IDLE > SILENT ? IDLE : SILENT) : (HALF > SILENT ? HALF : SILENT)) + 256 ))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
    echo "the open-file hard limit ($hard) is below $need: lower IDLE/HALF/SILENT" >&2
    exit 1
fi
ulimit -n "$need"

examples=()
for name in $SERVERS; do
    case $name in
        hyper | axum) ;;
        *) examples+=(--example "$name") ;;
    esac
done
if ((${#examples[@]})); then
    # axum_server needs the tower bridge.
    cargo build --release --features tower "${examples[@]}" >&2
fi
if [[ " $SERVERS " == *" axum "* ]]; then
    CARGO_TARGET_DIR="$TARGET/axum-hello" \
        cargo build --release --manifest-path bench/axum-hello/Cargo.toml >&2
fi
if [[ " $SERVERS " == *" hyper "* ]]; then
    CARGO_TARGET_DIR="$TARGET/hyper-hello" \
        cargo build --release --manifest-path bench/hyper-hello/Cargo.toml >&2
fi
BIN="$TARGET/release/examples"
HYPER_BIN="$TARGET/hyper-hello/release/hyper-hello"
WORK=$(mktemp -d)
SERVER_PID=
CLIENT_PID=
cleanup() {
    [ -n "$CLIENT_PID" ] && kill "$CLIENT_PID" 2>/dev/null || true
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# The client: opens N connections in one state, prints "ready", holds them
# until its standard input closes.
cat >"$WORK/hold.py" <<'PY'
import socket, sys, time

mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
GET = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
HALF = b"GET / HTTP/1.1\r\nHost: a\r\nX-Slow: 1"
held = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    held.append(s)
    if mode == "idle":
        # One exchange, the response read whole: this also paces the
        # connects to what the server accepts.
        s.sendall(GET)
        got = b""
        while not got.endswith(b"Hello, World!"):
            chunk = s.recv(4096)
            if not chunk:
                sys.exit("connection %d closed before its response" % i)
            got += chunk
    elif mode == "half-head":
        s.sendall(HALF)
    if i % 64 == 63 and mode != "idle":
        # Within any listen backlog (hyper's is 128).
        time.sleep(0.005)
print("ready", flush=True)
sys.stdin.read()
PY

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }

start_server() { # name
    local bin
    case $1 in
        hyper) bin=$HYPER_BIN ;;
        axum) bin="$TARGET/axum-hello/release/axum-hello" ;;
        *) bin="$BIN/$1" ;;
    esac
    "$bin" --addr "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 200); do
        if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then return; fi
        sleep 0.05
    done
    echo "$1 did not start" >&2
    cat "$WORK/server.log" >&2
    exit 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# One measurement; prints KiB per connection.
measure() { # name mode count
    local name=$1 mode=$2 n=$3 before after
    start_server "$name"
    sleep "$SETTLE"
    before=$(rss_kib "$SERVER_PID")
    mkfifo "$WORK/in"
    python3 "$WORK/hold.py" "$mode" "$PORT" "$n" <"$WORK/in" >"$WORK/out" &
    CLIENT_PID=$!
    exec 3>"$WORK/in"
    for _ in $(seq 1200); do
        grep -q ready "$WORK/out" 2>/dev/null && break
        kill -0 "$CLIENT_PID" 2>/dev/null || break
        sleep 0.05
    done
    grep -q ready "$WORK/out" || { echo "$name $mode: the client failed" >&2; exit 1; }
    sleep "$SETTLE"
    after=$(rss_kib "$SERVER_PID")
    echo "$name $mode: RSS $before -> $after KiB with $n connections, $(threads "$SERVER_PID") threads" >&2
    exec 3>&-
    wait "$CLIENT_PID" 2>/dev/null || true
    CLIENT_PID=
    rm -f "$WORK/in" "$WORK/out"
    stop_server
    awk -v a="$before" -v b="$after" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }'
}

count_of() {
    case $1 in
        idle) echo "$IDLE" ;;
        half-head) echo "$HALF" ;;
        silent) echo "$SILENT" ;;
    esac
}

header="| server |"
rule="|---|"
for mode in $MODES; do
    header="$header $mode ($(count_of "$mode")) |"
    rule="$rule---|"
done
rows=()
for name in $SERVERS; do
    row="| $name |"
    for mode in $MODES; do
        row="$row $(measure "$name" "$mode" "$(count_of "$mode")") |"
    done
    rows+=("$row")
done

echo
echo "RSS growth per connection, KiB (connections held in parentheses)"
echo
echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
echo
echo "settle ${SETTLE}s; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r), $(date -u +%Y-%m-%d)"
