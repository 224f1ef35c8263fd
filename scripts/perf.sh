#!/usr/bin/env bash
# The speed goals' regression guard (docs/benchmarks.md, "Goals"): every
# figure a goal names, measured in one run, and each goal's ratio in one
# table at the end.
#
#   scripts/perf.sh                    # callgrind parts (about 10 minutes)
#   WRK=1 scripts/perf.sh              # also PIN=1 scripts/bench-wrk.sh
#   PARTS="exchange e2e" scripts/perf.sh
#
# Parts (PARTS, all by default):
#
#   mix       instructions per message of the six-message mix
#             (dev/src/bin/callgrind_probe.rs, N1 and N2 iterations, the
#             difference divided by N2 - N1): h1proto with a reused decoder,
#             with recycled field maps (as a connection decodes), with a
#             fresh decoder; httparse alone; httparse + `http` built as
#             hyper builds them (zero-copy, the baseline of the targets) and
#             by copying (for comparison with older figures); the memchr
#             floor; and h1proto's own share: h1proto+recycle less what it
#             spends inside the `http` crate (calls into `http::` counted by
#             callgrind, inclusive) and less the copy into the read buffer;
#             the wire view alone (`set_wire_only`, no `http` types), and
#             h1proto+recycle with the wire view on and the extension map
#             recycled too.
#   exchange  one ServerConnection exchange per request of the mix
#             (`callgrind_probe server`): the request polled to its end,
#             `Hello, World!` answered, the output drained; the share of it
#             spent in the head parser (src/head, calls into it counted
#             inclusive, so with the `http` constructors it calls); and the
#             same exchange on a ServerSession driven as the tokio adapter
#             drives it, without a socket (`callgrind_probe session`).
#   chunked   64 KiB of chunked body in 64-byte and in 4 KiB chunks, and the
#             memchr floor over the same bytes.
#   e2e       user-space instructions and heap allocations per keep-alive
#             request of hello_server, blocking_server, hyper
#             (bench/hyper-hello) and may_minihttp (bench/may-hello, one
#             worker): a Python client sends E2E_N1 and then
#             E2E_N2 sequential curl-like `GET /` requests on one connection
#             to a server running under callgrind, stopped with SIGTERM; the
#             difference divided by E2E_N2 - E2E_N1 (runs of the same build
#             differ by about 1%: when a request arrives relative to the
#             server's polls varies). Allocations likewise under memcheck,
#             with ALLOC_N1 and ALLOC_N2 requests. E2E_SERVERS picks the
#             servers (all four by default; hyper and may_minihttp are
#             built only when named; `axum_server` and `axum`, the same axum Router on the
#             tower bridge and on axum::serve, are built when named). With E2E_FRESH=1, every request comes on a connection
#             of its own, closed after the response: what a client that
#             does not keep connections costs a server (accept, a fresh
#             session, a first head's names and values learned), per
#             connection; E2E_N1 and E2E_N2 then default to 200 and 1000,
#             and the allocation targets are not checked (a connection
#             allocates). With E2E_DEPTH=16 (any depth above 1), the
#             requests are pipelined on the one connection: that many
#             written at once, then their responses read, as wrk's
#             pipelining load sends them (scripts/bench-wrk.sh): what a
#             pipelined request costs, end to end, per request (E2E_N1
#             and E2E_N2 are rounded up to multiples of the depth).
#
# BASE=<commit> also measures that commit's hello_server and
# blocking_server (and axum_server, when E2E_SERVERS names it) in the e2e
# part, in the same run, beside the work tree's
# (its tree is built from `git archive` into a temporary directory, in
# $CARGO_TARGET_DIR/perf-base), and prints the change per request: how an
# optimization is judged (docs/benchmarks.md, "Simplicity wins ties").
#
#   BASE=HEAD~1 PARTS=e2e E2E_SERVERS="hello_server blocking_server" scripts/perf.sh
#
# Needs valgrind and python3; WRK=1 needs wrk (bench-wrk.sh installs it).
set -euo pipefail
# --help: the comment above, which says what this measures and how.
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi
shopt -s inherit_errexit

cd "$(dirname "$0")/.."
N1=${N1:-200}
N2=${N2:-1200}
E2E_FRESH=${E2E_FRESH:-0}
E2E_DEPTH=${E2E_DEPTH:-1}
if [ "$E2E_FRESH" = 1 ]; then
    E2E_N1=${E2E_N1:-200}
    E2E_N2=${E2E_N2:-1000}
else
    E2E_N1=${E2E_N1:-1024}
    E2E_N2=${E2E_N2:-5120}
fi
ALLOC_N1=${ALLOC_N1:-256}
ALLOC_N2=${ALLOC_N2:-1280}
PARTS=${PARTS:-mix exchange chunked e2e}
E2E_SERVERS=${E2E_SERVERS:-hello_server blocking_server hyper may_minihttp}
BASE=${BASE:-}
WRK=${WRK:-0}
PORT=${PORT:-18290}
TARGET=${CARGO_TARGET_DIR:-target}

# Reference levels the targets compare with (see docs/benchmarks.md):
# the goal for user-space instructions per keep-alive request of
# hello_server (its own share halved: tokio and mio take about 2,300 of
# them), and the 4 KiB-chunk figure that must not fall (instructions per 64 KiB of body,
# h1proto less the copy into the buffer, before the work on the speed
# goals), both 2026-11-30.
E2E_LEVEL=${E2E_LEVEL:-5600}
CHUNKED_4K_LEVEL=${CHUNKED_4K_LEVEL:-10841}

command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install -y valgrind)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 1; }
has() { [[ " $PARTS " == *" $1 "* ]]; }

WORK=$(mktemp -d)
VALGRIND_PID=
cleanup() {
    [ -n "$VALGRIND_PID" ] && kill "$VALGRIND_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

if [ -n "$BASE" ] && has e2e; then
    # A target directory of its own: cargo names a package's artifacts by
    # its path within the workspace, so a build of the base tree in the
    # same one would be taken for the work tree's.
    mkdir -p "$WORK/base-src" "$WORK/base"
    git archive "$BASE" | tar -x -C "$WORK/base-src"
    base_target=$(realpath -m "$TARGET/perf-base")
    (cd "$WORK/base-src" && CARGO_TARGET_DIR="$base_target" \
        cargo build --release --example hello_server --example blocking_server >&2)
    cp "$base_target/release/examples/hello_server" "$base_target/release/examples/blocking_server" "$WORK/base/"
    if has e2e && [[ " $E2E_SERVERS " == *" axum_server "* ]]; then
        (cd "$WORK/base-src" && CARGO_TARGET_DIR="$base_target" \
            cargo build --release --features tower --example axum_server >&2)
        cp "$base_target/release/examples/axum_server" "$WORK/base/"
    fi
fi
cargo build --release -p h1proto-dev --bin callgrind_probe >&2
cargo build --release --example hello_server --example blocking_server >&2
PROBE="$TARGET/release/callgrind_probe"
if has e2e && [[ " $E2E_SERVERS " == *" hyper "* ]]; then
    CARGO_TARGET_DIR="$TARGET/hyper-hello" \
        cargo build --release --manifest-path bench/hyper-hello/Cargo.toml >&2
fi
if has e2e && [[ " $E2E_SERVERS " == *" may_minihttp "* ]]; then
    CARGO_TARGET_DIR="$TARGET/may-hello" \
        cargo build --release --manifest-path bench/may-hello/Cargo.toml >&2
fi
# The axum Router on the tower bridge, and on axum::serve.
if has e2e && [[ " $E2E_SERVERS " == *" axum_server "* ]]; then
    cargo build --release --features tower --example axum_server >&2
fi
if has e2e && [[ " $E2E_SERVERS " == *" axum "* ]]; then
    CARGO_TARGET_DIR="$TARGET/axum-hello" \
        cargo build --release --manifest-path bench/axum-hello/Cargo.toml >&2
fi

# Cost of the calls into some code from outside it, in one callgrind
# output file: each edge from a caller that is not that code to a callee
# that is, inclusive. The code: the `http` crate (`http`), or h1proto's
# head parser, src/head (`head`).
cat >"$WORK/share.py" <<'PY'
import re, subprocess, sys

HTTP = re.compile({
    'http': r'^(<?http::|core::ptr::drop_in_place<http::)',
    'head': r'^<?h1proto::head::',
}[sys.argv[2]])
LINE = re.compile(r'^\s*([\d,]+) \(\s*[\d.]+%\)\s+([<*])\s+(.*?)(?: \(\d[\d,]*x\))?(?: \[.*\])?$')

out = subprocess.run(['callgrind_annotate', '--tree=caller', '--threshold=100', sys.argv[1]],
                     capture_output=True, text=True, check=True).stdout
total = 0
for block in out.split('\n\n'):
    lines = [LINE.match(l) for l in block.split('\n')]
    lines = [m for m in lines if m]
    star = [m for m in lines if m.group(2) == '*']
    if not star or not HTTP.match(star[0].group(3).replace('???:', '')):
        continue
    for m in lines:
        if m.group(2) == '<' and not HTTP.match(m.group(3).replace('???:', '')):
            total += int(m.group(1).replace(',', ''))
print(total)
PY

# Total instructions of one probe run; with a third argument, keeps the
# callgrind output there.
instructions() { # op message iterations [keep]
    local out="$WORK/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$PROBE" "$1" "$2" "$3" >/dev/null 2>"$WORK/err" \
        || { cat "$WORK/err" >&2; exit 1; }
    [ -n "${4:-}" ] && cp "$out" "$4"
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

per_message() { # op message [n1 n2]
    local n1=${3:-$N1} n2=${4:-$N2} a b
    a=$(instructions "$1" "$2" "$n1")
    b=$(instructions "$1" "$2" "$n2")
    echo $(( (b - a) / (n2 - n1) ))
}

# h1proto+recycle per message, and its calls into `http` per message.
recycle_and_http() { # message
    local a b ha hb
    a=$(instructions h1proto+recycle "$1" "$N1" "$WORK/a.out")
    b=$(instructions h1proto+recycle "$1" "$N2" "$WORK/b.out")
    ha=$(python3 "$WORK/share.py" "$WORK/a.out" http)
    hb=$(python3 "$WORK/share.py" "$WORK/b.out" http)
    echo "$(( (b - a) / (N2 - N1) )) $(( (hb - ha) / (N2 - N1) ))"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

MESSAGES=${MESSAGES:-curl_get browser_get pico_703 post_json response_nginx response_cdn}
TARGETS="$WORK/targets"
: >"$TARGETS"
# One row of the target table: what, measured, goal, ratio (>= 1: met).
target() { # name measured goal ratio
    local status="not met"
    awk -v r="$4" 'BEGIN { exit !(r >= 1) }' && status=met
    printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$status" >>"$TARGETS"
}

if has mix; then
    echo "## Decoding the mix (instructions per message)"
    echo
    echo '| message | h1proto | h1proto+recycle | h1proto-fresh | wire only | +wire, recycled | refill | in `http` | own share | httparse | httparse+http | httparse+http-copy | memchr | recycle vs httparse+http | fresh vs httparse+http | httparse / own share | httparse / wire only |'
    echo '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
    declare -A sum
    min_ratio=
    for m in $MESSAGES; do
        declare -A v
        for op in h1proto h1proto-fresh h1proto-wire-only h1proto+wire+recycle refill httparse httparse+http httparse+http-copy memchr; do
            v[$op]=$(per_message "$op" "$m")
        done
        read -r v[h1proto+recycle] v[http] <<<"$(recycle_and_http "$m")"
        v[own]=$(( v[h1proto+recycle] - v[http] - v[refill] ))
        for k in "${!v[@]}"; do sum[$k]=$(( ${sum[$k]:-0} + ${v[$k]} )); done
        r=$(ratio "${v[httparse+http]}" "${v[h1proto+recycle]}")
        min_ratio=$(awk -v a="$r" -v b="${min_ratio:-$r}" 'BEGIN { print (a < b ? a : b) }')
        echo "| $m | ${v[h1proto]} | ${v[h1proto+recycle]} | ${v[h1proto-fresh]} | ${v[h1proto-wire-only]} | ${v[h1proto+wire+recycle]} | ${v[refill]} | ${v[http]} | ${v[own]} | ${v[httparse]} | ${v[httparse+http]} | ${v[httparse+http-copy]} | ${v[memchr]} | $r | $(ratio "${v[httparse+http]}" "${v[h1proto-fresh]}") | $(ratio "${v[httparse]}" "${v[own]}") | $(ratio "${v[httparse]}" "${v[h1proto-wire-only]}") |"
        unset v
    done
    count=$(echo $MESSAGES | wc -w)
    mean() { echo $(( ${sum[$1]} / count )); }
    mix_r=$(ratio "${sum[httparse+http]}" "${sum[h1proto+recycle]}")
    fresh_r=$(ratio "${sum[httparse+http]}" "${sum[h1proto-fresh]}")
    own_r=$(ratio "${sum[httparse]}" "${sum[own]}")
    wire_r=$(ratio "${sum[httparse]}" "${sum[h1proto-wire-only]}")
    over=$(awk -v a="${sum[h1proto+recycle]}" -v b="${sum[h1proto+wire+recycle]}" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }')
    echo "| **mix (mean of $count)** | $(mean h1proto) | $(mean h1proto+recycle) | $(mean h1proto-fresh) | $(mean h1proto-wire-only) | $(mean h1proto+wire+recycle) | $(mean refill) | $(mean http) | $(mean own) | $(mean httparse) | $(mean httparse+http) | $(mean httparse+http-copy) | $(mean memchr) | $mix_r | $fresh_r | $own_r | $wire_r |"
    echo
    target "full decode as a connection decodes (recycled maps) vs httparse+http, mix" "${mix_r}x" "≥ 1.5x" "$(ratio "$mix_r" 1.5)"
    target "the same, the worst message" "${min_ratio}x" "≥ 1.2x" "$(ratio "$min_ratio" 1.2)"
    target "a fresh decoder vs httparse+http, mix" "${fresh_r}x" "≥ 1.0x" "$(ratio "$fresh_r" 1.0)"
    target "h1proto's own share per head vs httparse, mix" "$(mean own) vs $(mean httparse)" "≤ httparse" "$own_r"
    # The wire view alone (`set_wire_only`): a decode that builds no `http`
    # type, copy into the buffer and all, against httparse's parse alone.
    target "wire view alone vs httparse, mix" "$(mean h1proto-wire-only) vs $(mean httparse)" "≤ httparse" "$wire_r"
    # The wire view on, field and extension maps recycled, against the same
    # decode without it.
    target "wire view on, maps recycled, vs off, mix" "$over" "≤ +10%" "$(awk -v a="${sum[h1proto+recycle]}" -v b="${sum[h1proto+wire+recycle]}" 'BEGIN { printf "%.2f", 0.10 / ((b - a) / a) }')"
fi

if has exchange; then
    echo "## One exchange: ServerConnection, and ServerSession as a driver runs it (instructions per exchange)"
    echo
    # The `http` floor: the request head delivered as `http::Request<()>`
    # from offsets found beforehand, nothing read or checked (the probe's
    # `http-floor`): what any reader that hands out `http` types pays.
    echo '| request | ServerConnection exchange | of it in the head parser (src/head, with the `http` constructors it calls) | the exchange without the parser | ServerSession exchange | `http` floor of the request head |'
    echo '|---|---|---|---|---|---|'
    for m in $MESSAGES; do
        case $m in response_*) continue ;; esac
        a=$(instructions server "$m" "$N1" "$WORK/a.out")
        b=$(instructions server "$m" "$N2" "$WORK/b.out")
        v=$(( (b - a) / (N2 - N1) ))
        ha=$(python3 "$WORK/share.py" "$WORK/a.out" head)
        hb=$(python3 "$WORK/share.py" "$WORK/b.out" head)
        parser=$(( (hb - ha) / (N2 - N1) ))
        [ "$m" = curl_get ] && curl_exchange=$v
        echo "| $m | $v | $parser | $(( v - parser )) | $(per_message session "$m") | $(per_message http-floor "$m") |"
    done
    echo
    target "one ServerConnection exchange, curl's GET answered Hello, World!" "$curl_exchange" "≤ 4,000" "$(ratio 4000 "$curl_exchange")"
fi

if has chunked; then
    echo "## Chunked bodies (instructions per 64 KiB of body)"
    echo
    echo '| chunks | h1proto | the copy into the buffer | h1proto less the copy | memchr floor | floor / h1proto |'
    echo '|---|---|---|---|---|---|'
    for c in 64 4k; do
        h=$(per_message h1proto "chunks_$c" 20 60)
        r=$(per_message refill "chunks_$c" 20 60)
        f=$(per_message memchr "chunks_$c" 20 60)
        net=$(( h - r ))
        share=$(awk -v a="$f" -v b="$net" 'BEGIN { printf "%.3f", a / b }')
        label="$c bytes"; [ "$c" = 4k ] && label="4 KiB"
        echo "| $label | $h | $r | $net | $f | $share |"
        if [ "$c" = 64 ]; then
            target "64-byte chunks: share of the memchr floor's rate (in instructions)" "$(awk -v s="$share" 'BEGIN { printf "%.1f%%", s * 100 }')" "≥ 25%" "$(ratio "$share" 0.25)"
        else
            target "4 KiB chunks: no more instructions than the recorded level" "$net" "≤ $CHUNKED_4K_LEVEL" "$(ratio "$CHUNKED_4K_LEVEL" "$net")"
        fi
    done
    echo
fi

if has e2e; then
    # Waits until the server accepts a connection (the probe connection is
    # made in both runs, so it cancels out).
    wait_listening() {
        for _ in $(seq 300); do
            python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), timeout=1).close()" 2>/dev/null && return
            sleep 0.1
        done
        echo "the server did not start:" >&2
        cat "$WORK/e2e.err" >&2
        exit 1
    }
    # One run under valgrind: the total the tool reports.
    one_run() { # tool binary requests
        local out=()
        [ "$1" = callgrind ] && out=(--callgrind-out-file="$WORK/e2e.out")
        valgrind --tool="$1" "${out[@]}" "$2" --addr "127.0.0.1:$PORT" >/dev/null 2>"$WORK/e2e.err" &
        VALGRIND_PID=$!
        wait_listening
        DEPTH=$E2E_DEPTH python3 scripts/keepalive_client.py "$PORT" "$3" "$E2E_FRESH"
        kill -TERM "$VALGRIND_PID"
        wait "$VALGRIND_PID" || true
        VALGRIND_PID=
        if [ "$1" = callgrind ]; then
            awk '/^(summary|totals):/ { print $2; exit }' "$WORK/e2e.out"
        else
            sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$WORK/e2e.err" | tr -d ,
        fi
    }
    per_request() { # tool binary n1 n2
        local a b
        a=$(one_run "$1" "$2" "$3")
        b=$(one_run "$1" "$2" "$4")
        awk -v a="$a" -v b="$b" -v n=$(($4 - $3)) 'BEGIN { printf "%.1f", (b - a) / n }'
    }
    if [ "$E2E_FRESH" = 1 ]; then
        echo "## End to end: one request on a connection of its own (user space, valgrind)"
    elif [ "$E2E_DEPTH" -gt 1 ]; then
        echo "## End to end: one request pipelined $E2E_DEPTH deep (user space, valgrind)"
    else
        echo "## End to end: one keep-alive request (user space, valgrind)"
    fi
    echo
    if [ -n "$BASE" ]; then
        echo "| server | instructions/request | allocations/request | at $BASE | change |"
        echo '|---|---|---|---|---|'
    else
        echo '| server | instructions/request | allocations/request |'
        echo '|---|---|---|'
    fi
    declare -A e2e
    kind=keep-alive
    [ "$E2E_DEPTH" -gt 1 ] && kind="pipelined ($E2E_DEPTH deep)"
    for server in $E2E_SERVERS; do
        bin="$TARGET/release/examples/$server"
        [ "$server" = hyper ] && bin="$TARGET/hyper-hello/release/hyper-hello"
        [ "$server" = axum ] && bin="$TARGET/axum-hello/release/axum-hello"
        [ "$server" = may_minihttp ] && bin="$TARGET/may-hello/release/may-hello"
        e2e[$server]=$(per_request callgrind "$bin" "$E2E_N1" "$E2E_N2")
        allocs=$(per_request memcheck "$bin" "$ALLOC_N1" "$ALLOC_N2")
        if [ -n "$BASE" ] && [ -x "$WORK/base/$server" ]; then
            base=$(per_request callgrind "$WORK/base/$server" "$E2E_N1" "$E2E_N2")
            change=$(awk -v a="$base" -v b="${e2e[$server]}" 'BEGIN { printf "%+.2f%%", (b - a) * 100 / a }')
            echo "| $server | ${e2e[$server]%.*} | $allocs | ${base%.*} | $change |"
        elif [ -n "$BASE" ]; then
            echo "| $server | ${e2e[$server]%.*} | $allocs | - | - |"
        else
            echo "| $server | ${e2e[$server]%.*} | $allocs |"
        fi
        if [[ " hyper may_minihttp axum axum_server " != *" $server "* ]] && [ "$E2E_FRESH" != 1 ]; then
            target "$server: heap allocations per $kind request" "$allocs" "0" "$(awk -v a="$allocs" 'BEGIN { print (a < 0.05 ? 1 : 0) }')"
        fi
    done
    echo
    if [ -n "${e2e[hello_server]:-}" ] && [ "$E2E_FRESH" != 1 ] && [ "$E2E_DEPTH" = 1 ]; then
        target "hello_server: user-space instructions per keep-alive request" "${e2e[hello_server]%.*}" "≤ $E2E_LEVEL" "$(ratio "$E2E_LEVEL" "${e2e[hello_server]}")"
    fi
    if [ -n "${e2e[hello_server]:-}" ] && [ -n "${e2e[hyper]:-}" ] && [ "$E2E_FRESH" != 1 ]; then
        echo "| (hello_server / hyper, user-space instructions per $kind request) | $(ratio "${e2e[hello_server]}" "${e2e[hyper]}")x | (information) | - | - |" >>"$TARGETS"
    fi
    if [ -n "${e2e[hello_server]:-}" ] && [ -n "${e2e[may_minihttp]:-}" ] && [ "$E2E_FRESH" != 1 ]; then
        echo "| (hello_server / may_minihttp, user-space instructions per $kind request) | $(ratio "${e2e[hello_server]}" "${e2e[may_minihttp]}")x | (information) | - | - |" >>"$TARGETS"
    fi
fi

if [ "$WRK" = 1 ]; then
    echo "## wrk, pinned (scripts/bench-wrk.sh PIN=1)"
    echo
    PIN=1 scripts/bench-wrk.sh | tee "$WORK/wrk"
    echo
    cpu=$(awk -F'|' '$2 ~ /keep-alive/ && NF > 8 { gsub(/ /, "", $6); gsub(/ /, "", $7); print $6 / $7 }' "$WORK/wrk")
    pipe=$(awk -F'|' '$2 ~ /pipelined/ && NF > 8 { gsub(/ /, "", $5); print $5 }' "$WORK/wrk")
    target "hello_server CPU per keep-alive request / hyper's (wrk, pinned)" "$(printf '%.2f' "$cpu")x" "≤ 0.85x" "$(ratio 0.85 "$cpu")"
    target "pipelined requests/s / hyper's (wrk, pinned)" "${pipe}x" "≥ 3x" "$(ratio "$pipe" 3)"
fi

if [ -s "$TARGETS" ]; then
    echo "## Targets of the speed goals"
    echo
    echo '| target | measured | goal | ratio (≥ 1: met) | status |'
    echo '|---|---|---|---|---|'
    cat "$TARGETS"
    echo
fi
echo "callgrind Ir: probe N2=$N2 - N1=$N1 iterations, end to end $E2E_N2 - $E2E_N1 requests (memcheck $ALLOC_N2 - $ALLOC_N1);" \
     "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(rustc --version), $(valgrind --version), $(date -u +%Y-%m-%d)"
