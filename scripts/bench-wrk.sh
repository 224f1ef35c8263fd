#!/usr/bin/env bash
# hello_server (h1proto) against a hyper 1.x hello server (and, on
# request, may_minihttp's) under wrk, on 127.0.0.1, in one run,
# interleaved A B A B: plain keep-alive (wrk -t1 -c50) and 16-deep
# pipelining (a wrk Lua script). Prints requests/s, server CPU per request
# (utime + stime of all its threads, from /proc/PID/stat, before and after
# each load) and the ratio h1proto / hyper.
#
#   scripts/bench-wrk.sh                 # 5 s per load, 2 rounds
#   SERVERS="hello_server may_minihttp hyper" PIN=1 ROUNDS=3 scripts/bench-wrk.sh
#                                        # every server's CPU per request as a
#                                        # multiple of may_minihttp's
#                                        # (bench/may-hello), round by round
#   SERVERS="null hello_server may_minihttp" PIN=1 scripts/bench-wrk.sh
#                                        # and as a multiple of the null
#                                        # server's (bench/null-hello: tokio,
#                                        # no parsing), the floor
#   DURATION=10 ROUNDS=3 scripts/bench-wrk.sh
#   SERVERS="h1proto uring" PIN=1 scripts/bench-wrk.sh   # uring_server beside hello_server
#   WRITES=1 scripts/bench-wrk.sh        # also count writes per request (strace)
#   PIN=1 scripts/bench-wrk.sh           # server on CPU 0, wrk on CPU 1 (taskset)
#   SERVERS="axum_server axum" PIN=1 scripts/bench-wrk.sh
#                                        # an axum Router on h1proto's tower bridge
#                                        # (examples/axum_server) against the same
#                                        # Router on axum::serve (bench/axum-hello)
#
# Unpinned, the server's worker threads and wrk share the cores and
# requests/s depend on how they are scheduled. With PIN=1 each server has
# one core to itself (one worker then, for every server alike)
# and wrk another: the server is the bottleneck, so requests/s follow its
# CPU per request.
#
# h1proto and hyper send the same bytes (`content-type: text/plain`,
# `content-length: 13`, `Hello, World!`, a `date`), run one
# single-threaded tokio runtime per worker thread (one worker per CPU, so
# one with PIN=1) and set TCP_NODELAY. may_minihttp runs as its
# TechEmpower entry does (one may worker per CPU it may use, so one with
# PIN=1) and writes its own head: `200 Ok`, `Server: M`, `Date`,
# `Content-Length`, `Content-Type`, no TCP_NODELAY (bench/may-hello says
# more). Requests/s drift 20-30% between runs on shared machines: compare
# only the figures of one run.
set -euo pipefail
# --help: the comment above, which says what this measures and how.
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi

cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
CONNECTIONS=${CONNECTIONS:-50}
DEPTH=${DEPTH:-16}
PORT_A=${PORT_A:-18080}
PORT_B=${PORT_B:-18081}
PORT_C=${PORT_C:-18082}
PORT_D=${PORT_D:-18083}
PORT_E=${PORT_E:-18084}
PORT_F=${PORT_F:-18085}
PORT_G=${PORT_G:-18086}
# h1proto (or hello_server): hello_server; hyper: bench/hyper-hello;
# uring (or uring_server): uring_server (io_uring, one thread);
# axum_server: examples/axum_server (feature tower); axum: the same router
# on axum::serve, bench/axum-hello (hyper, which sends `date`);
# may_minihttp: bench/may-hello; null: bench/null-hello, a tokio server
# that parses nothing (it counts empty lines and answers each with fixed
# bytes).
SERVERS=${SERVERS:-h1proto hyper}
SERVERS=$(for name in $SERVERS; do
    case $name in
        hello_server) echo h1proto ;;
        uring_server) echo uring ;;
        h1proto | hyper | uring | axum_server | axum | may_minihttp | null) echo "$name" ;;
        *) echo "unknown server: $name" >&2; exit 2 ;;
    esac
done | tr '\n' ' ')
SERVERS=${SERVERS% }
WRITES=${WRITES:-0}
PIN=${PIN:-0}
SERVER_ON=()
CLIENT_ON=()
if [ "$PIN" = 1 ]; then
    SERVER_ON=(taskset -c 0)
    CLIENT_ON=(taskset -c 1)
fi
TARGET=${CARGO_TARGET_DIR:-target}

if ! command -v wrk >/dev/null; then
    echo "installing wrk" >&2
    SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update >&2 && $SUDO apt-get install -y wrk >&2
fi

cargo build --release --example hello_server --example uring_server >&2
if [[ " $SERVERS " == *" axum_server "* ]]; then
    cargo build --release --features tower --example axum_server >&2
fi
if [[ " $SERVERS " == *" axum "* ]]; then
    CARGO_TARGET_DIR="$TARGET/axum-hello" \
        cargo build --release --manifest-path bench/axum-hello/Cargo.toml >&2
fi
# The hyper baseline is a crate of its own, so h1proto never builds hyper.
if [[ " $SERVERS " == *" hyper "* ]]; then
    CARGO_TARGET_DIR="$TARGET/hyper-hello" \
        cargo build --release --manifest-path bench/hyper-hello/Cargo.toml >&2
fi
# may_minihttp too (bench/may-hello): may and its coroutines stay out of
# h1proto's dependency graph.
if [[ " $SERVERS " == *" may_minihttp "* ]]; then
    CARGO_TARGET_DIR="$TARGET/may-hello" \
        cargo build --release --manifest-path bench/may-hello/Cargo.toml >&2
fi
if [[ " $SERVERS " == *" null "* ]]; then
    CARGO_TARGET_DIR="$TARGET/null-hello" \
        cargo build --release --manifest-path bench/null-hello/Cargo.toml >&2
fi
BIN="$TARGET/release/examples"
HYPER_BIN="$TARGET/hyper-hello/release/hyper-hello"
AXUM_BIN="$TARGET/axum-hello/release/axum-hello"
MAY_BIN="$TARGET/may-hello/release/may-hello"
NULL_BIN="$TARGET/null-hello/release/null-hello"
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/pipeline.lua" <<'LUA'
-- Sends DEPTH requests in one write and waits for all DEPTH responses.
init = function(args)
   local depth = tonumber(args[1]) or 16
   local r = {}
   for i = 1, depth do
      r[i] = wrk.format()
   end
   req = table.concat(r)
end

request = function()
   return req
end
LUA

TICKS=$(getconf CLK_TCK)

# utime + stime of a process, in clock ticks (fields 14 and 15 of
# /proc/PID/stat, counted after the command name in parentheses).
cpu_ticks() {
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

start_server() { # name port
    local bin="$BIN/hello_server"
    [ "$1" = hyper ] && bin=$HYPER_BIN
    [ "$1" = uring ] && bin="$BIN/uring_server"
    [ "$1" = axum_server ] && bin="$BIN/axum_server"
    [ "$1" = axum ] && bin=$AXUM_BIN
    [ "$1" = may_minihttp ] && bin=$MAY_BIN
    [ "$1" = null ] && bin=$NULL_BIN
    "${SERVER_ON[@]}" "$bin" --addr "127.0.0.1:$2" >"$WORK/$1.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        if curl -s -o /dev/null "http://127.0.0.1:$2/"; then return; fi
        sleep 0.05
    done
    echo "$1 did not start" >&2
    exit 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# One bounded load against one server; appends "mode server rps us_per_req".
run_one() { # mode name port
    local mode=$1 name=$2 port=$3 args=()
    [ "$mode" = pipelined ] && args=(-s "$WORK/pipeline.lua" -- "$DEPTH")
    start_server "$name" "$port"
    local before after out requests rps
    before=$(cpu_ticks "$SERVER_PID")
    out=$("${CLIENT_ON[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "http://127.0.0.1:$port/" "${args[@]}")
    after=$(cpu_ticks "$SERVER_PID")
    stop_server
    requests=$(echo "$out" | awk '/requests in/ { print $1 }')
    rps=$(echo "$out" | awk '/^Requests\/sec/ { print $2 }')
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "$out" | grep "Non-2xx\|Socket errors" | sed "s/^/$name $mode: /" >&2
    fi
    local us
    us=$(awk -v t=$((after - before)) -v hz="$TICKS" -v n="$requests" \
        'BEGIN { printf "%.2f", t / hz / n * 1e6 }')
    printf '%s %s %s %s %s\n' "$mode" "$name" "$rps" "$us" "$round" >>"$WORK/results"
    printf '| %s | %s | %s | %.0f | %s |\n' "$mode" "$name" "$round" "$rps" "$us"
}

echo "| load | server | round | requests/s | server CPU µs/request |"
echo "|---|---|---|---|---|"
for mode in keep-alive pipelined; do
    for round in $(seq "$ROUNDS"); do
        for name in $SERVERS; do
            case $name in
                h1proto) run_one "$mode" h1proto "$PORT_A" ;;
                hyper) run_one "$mode" hyper "$PORT_B" ;;
                uring) run_one "$mode" uring "$PORT_C" ;;
                axum_server) run_one "$mode" axum_server "$PORT_D" ;;
                axum) run_one "$mode" axum "$PORT_E" ;;
                may_minihttp) run_one "$mode" may_minihttp "$PORT_F" ;;
                null) run_one "$mode" null "$PORT_G" ;;
            esac
        done
    done
done

echo
echo "| load | server | requests/s | server CPU µs/request |"
echo "|---|---|---|---|"
for mode in keep-alive pipelined; do
    for name in $SERVERS; do
        awk -v mode="$mode" -v name="$name" '
            $1 == mode && $2 == name { rps += $3; us += $4; n++ }
            END { printf "| %s | %s | %.0f | %.2f |\n", mode, name, rps / n, us / n }' "$WORK/results"
    done
done
# Each pair run side by side: h1proto against hyper, and the axum Router
# on h1proto against the same Router on axum::serve.
for pair in "h1proto hyper" "axum_server axum"; do
    read -r a b <<<"$pair"
    [[ " $SERVERS " == *" $a "* && " $SERVERS " == *" $b "* ]] || continue
    echo
    echo "| load | $a requests/s | $b requests/s | ratio $a / $b | $a CPU µs/req | $b CPU µs/req | CPU ratio $a / $b |"
    echo "|---|---|---|---|---|---|---|"
    for mode in keep-alive pipelined; do
        awk -v mode="$mode" -v a="$a" -v b="$b" '
            $1 == mode { rps[$2] += $3; us[$2] += $4; n[$2]++ }
            END {
                ra = rps[a] / n[a]; rb = rps[b] / n[b]
                ca = us[a] / n[a]; cb = us[b] / n[b]
                printf "| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |\n", mode, ra, rb, ra / rb, ca, cb, ca / cb
            }' "$WORK/results"
    done
done

# Every server against may_minihttp and against the null server, when
# they ran: CPU per request as a multiple of the baseline's, from the means
# of the rounds and round by round (each round's servers ran one after the
# other, so a round's ratio shares its moment's load on the machine).
for base in may_minihttp null; do
    [[ " $SERVERS " == *" $base "* ]] || continue
    echo
    echo "| load | server | CPU µs/req | $base CPU µs/req | CPU ratio server / $base | ratio round by round |"
    echo "|---|---|---|---|---|---|"
    for mode in keep-alive pipelined; do
        for name in $SERVERS; do
            [ "$name" = "$base" ] && continue
            [ "$base" = may_minihttp ] && [ "$name" = null ] && continue
            awk -v mode="$mode" -v a="$name" -v b="$base" '
                $1 == mode && $2 == a { ca += $4; na++; ra[$5] = $4 }
                $1 == mode && $2 == b { cb += $4; nb++; rb[$5] = $4 }
                END {
                    rounds = ""
                    for (r = 1; r in ra && r in rb; r++)
                        rounds = rounds (r > 1 ? ", " : "") sprintf("%.2f", ra[r] / rb[r])
                    printf "| %s | %s | %.2f | %.2f | %.2f | %s |\n", mode, a, ca / na, cb / nb, (ca / na) / (cb / nb), rounds
                }' "$WORK/results"
        done
    done
done

if [ "$WRITES" = 1 ] && command -v strace >/dev/null; then
    echo
    echo "| load | server | requests | write syscalls | writes/request |"
    echo "|---|---|---|---|---|"
    for mode in keep-alive pipelined; do
        for name in h1proto hyper; do
            port=$PORT_A; [ "$name" = hyper ] && port=$PORT_B
            args=(); [ "$mode" = pipelined ] && args=(-s "$WORK/pipeline.lua" -- "$DEPTH")
            start_server "$name" "$port"
            strace -f -c -e trace=write,writev,sendto,sendmsg -o "$WORK/strace" -p "$SERVER_PID" 2>/dev/null &
            spid=$!
            sleep 0.5
            out=$("${CLIENT_ON[@]}" wrk -t1 -c"$CONNECTIONS" -d2s "http://127.0.0.1:$port/" "${args[@]}")
            kill -INT "$spid"; wait "$spid" 2>/dev/null || true
            stop_server
            requests=$(echo "$out" | awk '/requests in/ { print $1 }')
            writes=$(awk '$NF ~ /^(write|writev|sendto|sendmsg)$/ { s += $4 } END { print s + 0 }' "$WORK/strace")
            printf '| %s | %s | %s | %s | %s |\n' "$mode" "$name" "$requests" "$writes" \
                "$(awk -v w="$writes" -v n="$requests" 'BEGIN { printf "%.3f", w / n }')"
        done
    done
fi

echo
pinned=; [ "$PIN" = 1 ] && pinned=" server on CPU 0, wrk on CPU 1;"
echo "wrk -t1 -c$CONNECTIONS -d${DURATION}s (pipelined: depth $DEPTH), $ROUNDS rounds A B A B;$pinned" \
     "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)"
