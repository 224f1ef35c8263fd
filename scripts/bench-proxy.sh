#!/usr/bin/env bash
# The example reverse proxy (examples/proxy) against nginx as a reverse
# proxy, in front of the same origin, under wrk on 127.0.0.1: the CPU time
# (user + system, of every thread or process of the proxy) per proxied
# request of a 100-byte file and of a 1 MiB file, and the ratio example
# proxy / nginx. Rounds alternate the two proxies (A B A B), each load on a
# freshly started proxy after a short warm-up that is not counted.
#
#   scripts/bench-proxy.sh                      # 5 s per load, 3 rounds, pinned
#   DURATION=10 ROUNDS=5 scripts/bench-proxy.sh
#   SIZES="100" scripts/bench-proxy.sh          # the small file only (bytes)
#   PROXY_ARGS="--no-via" scripts/bench-proxy.sh
#   PIN=0 scripts/bench-proxy.sh                # nothing pinned; both proxies
#                                               # get $(nproc) workers
#   MODE=callgrind scripts/bench-proxy.sh       # instructions per request
#   PROXY_BIN=/path/to/proxy scripts/bench-proxy.sh  # that build of the example
#                                               # (another commit's), not built here
#
# MODE=callgrind counts user-space instructions per proxied request
# instead, repeatably: each proxy runs under valgrind's callgrind (nginx
# with its worker, the example with one tokio worker) in front of the same
# origin, serving the first of SIZES as `/`, and a Python client sends
# CG_N1 and then, on a fresh start, CG_N2 sequential curl-like `GET /` on
# one keep-alive connection; the difference of the two totals divided by
# CG_N2 - CG_N1 is printed (the start-up and the first exchanges cancel
# out). Needs valgrind and python3. CG_OUT=DIR keeps the callgrind files
# there (DIR/example-N/, DIR/nginx-N/), for callgrind_annotate.
#
# The set-up, the same for both proxies:
# - the origin is nginx serving the files from a temporary directory (one
#   worker process, sendfile, keep-alive without a request limit);
# - PIN=1 (the default): the proxy on CPU 0 with one worker (the example
#   gets TOKIO_WORKER_THREADS=1, one thread with its runtime; nginx
#   `worker_processes 1`),
#   the origin and wrk on CPU 1;
# - the example proxy runs as `proxy --addr ... --upstream ...` with its
#   defaults (it adds `Via`; PROXY_ARGS adds options) and a pool of at most
#   64 idle upstream connections;
# - nginx proxies with `proxy_http_version 1.1`, `Connection ""` and an
#   upstream block with `keepalive 64`, no access log, keep-alive without
#   a request limit on both sides (nginx's default of 1,000 requests a
#   connection would make it reconnect where the example proxy does not),
#   and its default response buffering, with no temporary file
#   (`proxy_max_temp_file_size 0`: a buffer that fills waits for the
#   client instead of going to disk, as the example proxy's backpressure
#   does). NGINX_LOCATION replaces that last directive in its `location
#   /` (NGINX_LOCATION="proxy_buffering off;", NGINX_LOCATION="" for
#   nginx's temporary files).
#
# nginx is installed from the distribution's packages where it is missing
# (apt-get); every nginx here runs in the foreground with its own
# configuration, prefix, logs and pid file in a temporary directory, and is
# stopped at exit. A system nginx service that the installation started is
# stopped again. Timings on shared machines drift between runs: compare the
# figures of one run, round by round.
set -euo pipefail

cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-50}
SIZES=${SIZES:-100 1048576}
PIN=${PIN:-1}
PROXY_ARGS=${PROXY_ARGS:-}
NGINX_LOCATION=${NGINX_LOCATION-proxy_max_temp_file_size 0;}
PORT_EXAMPLE=${PORT_EXAMPLE:-18090}
PORT_NGINX=${PORT_NGINX:-18091}
PORT_ORIGIN=${PORT_ORIGIN:-18092}
MODE=${MODE:-wrk}
CG_N1=${CG_N1:-1024}
CG_N2=${CG_N2:-5120}
PROXY_ON=()
OTHERS_ON=()
if [ "$PIN" = 1 ]; then
    WORKERS=1
    PROXY_ON=(taskset -c 0)
    OTHERS_ON=(taskset -c 1)
else
    WORKERS=$(nproc)
fi
TARGET=${CARGO_TARGET_DIR:-target}

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
need_apt=()
[ "$MODE" = callgrind ] || command -v wrk >/dev/null || need_apt+=(wrk)
if [ "$MODE" = callgrind ]; then
    command -v valgrind >/dev/null || need_apt+=(valgrind)
fi
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "installing ${need_apt[*]}" >&2
    $SUDO apt-get update >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${need_apt[@]}" >&2
    # The package may start the system's nginx service: this script runs
    # its own, so that one is stopped again.
    if [[ " ${need_apt[*]} " == *" nginx "* ]]; then
        if command -v systemctl >/dev/null && systemctl is-active --quiet nginx 2>/dev/null; then
            $SUDO systemctl stop nginx || true
        elif [ -s /run/nginx.pid ]; then
            $SUDO nginx -s quit 2>/dev/null || true
        fi
    fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

if [ -z "${PROXY_BIN:-}" ]; then
    cargo build --release --example proxy >&2
    PROXY_BIN="$TARGET/release/examples/proxy"
fi

WORK=$(mktemp -d)
chmod 755 "$WORK"
ORIGIN_PID=
PROXY_PID=
cleanup() {
    [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
    [ -n "$ORIGIN_PID" ] && kill "$ORIGIN_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/www"
for size in $SIZES; do
    head -c "$size" /dev/zero | tr '\0' x >"$WORK/www/$size"
done

# An nginx configuration with everything in $WORK: its name, its number of
# worker processes, then the lines of its `http` block.
nginx_conf() { # name workers lines...
    local name=$1 workers=$2 user=
    shift 2
    mkdir -p "$WORK/$name"
    [ "$(id -u)" -eq 0 ] && user="user root;"
    {
        cat <<EOF
$user
daemon off;
master_process on;
worker_processes $workers;
pid $WORK/$name/nginx.pid;
error_log $WORK/$name/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/$name/body;
    proxy_temp_path $WORK/$name/proxy;
    fastcgi_temp_path $WORK/$name/fastcgi;
    uwsgi_temp_path $WORK/$name/uwsgi;
    scgi_temp_path $WORK/$name/scgi;
    keepalive_requests 1000000000;
    keepalive_timeout 75s;
EOF
        printf '    %s\n' "$@"
        echo "}"
    } >"$WORK/$name/nginx.conf"
}

nginx_conf origin 1 \
    "sendfile on;" \
    "tcp_nopush on;" \
    "open_file_cache max=16;" \
    "server { listen 127.0.0.1:$PORT_ORIGIN; root $WORK/www; index ${SIZES%% *}; }"
nginx_conf nginx "$WORKERS" \
    "upstream origin { server 127.0.0.1:$PORT_ORIGIN; keepalive 64; keepalive_requests 1000000000; }" \
    "server { listen 127.0.0.1:$PORT_NGINX; location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection \"\"; $NGINX_LOCATION } }"

wait_ready() { # port path name
    for _ in $(seq 100); do
        if curl -s -o /dev/null "http://127.0.0.1:$1$2"; then return; fi
        sleep 0.05
    done
    echo "$3 did not start" >&2
    exit 1
}

# The origin runs for the whole script, on wrk's core: one worker.
"${OTHERS_ON[@]}" "$NGINX" -p "$WORK/origin" -c "$WORK/origin/nginx.conf" -e "$WORK/origin/error.log" \
    >"$WORK/origin/out.log" 2>&1 &
ORIGIN_PID=$!
first_size=${SIZES%% *}
wait_ready "$PORT_ORIGIN" "/$first_size" origin

start_proxy() { # name port [command prefix...]
    local name=$1 port=$2
    shift 2
    case $name in
        example)
            # shellcheck disable=SC2086
            TOKIO_WORKER_THREADS=$WORKERS "${PROXY_ON[@]}" "$@" "$PROXY_BIN" --addr "127.0.0.1:$port" \
                --upstream "127.0.0.1:$PORT_ORIGIN" $PROXY_ARGS >"$WORK/example.log" 2>&1 &
            ;;
        nginx)
            "${PROXY_ON[@]}" "$@" "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" \
                -e "$WORK/nginx/error.log" >"$WORK/nginx/out.log" 2>&1 &
            ;;
    esac
    PROXY_PID=$!
    wait_ready "$port" "/$first_size" "$name"
}

stop_proxy() {
    kill "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    PROXY_PID=
}

# MODE=callgrind: user-space instructions per request, the proxy's
# processes summed (nginx's master and worker).
cg_total() { # name port requests
    local out="$WORK/cg-$1-$3"
    mkdir -p "$out"
    start_proxy "$1" "$2" valgrind --tool=callgrind --trace-children=yes \
        --callgrind-out-file="$out/cg.%p" -q
    python3 scripts/keepalive_client.py "$2" "$3" >/dev/null
    stop_proxy
    [ "$1" = nginx ] && sleep 1 # the worker writes its file as it exits
    if [ -n "${CG_OUT:-}" ]; then
        mkdir -p "$CG_OUT/$1-$3"
        cp "$out"/cg.* "$CG_OUT/$1-$3/"
    fi
    cat "$out"/cg.* | awk '/^totals:/ { t += $2 } END { print t + 0 }'
}
if [ "$MODE" = callgrind ]; then
    echo "| proxy | instructions per proxied GET / ($first_size bytes) |"
    echo "|---|---|"
    for name in example nginx; do
        port=$PORT_EXAMPLE
        [ "$name" = nginx ] && port=$PORT_NGINX
        t1=$(cg_total "$name" "$port" "$CG_N1")
        t2=$(cg_total "$name" "$port" "$CG_N2")
        printf '| %s | %s |\n' "$name" "$(( (t2 - t1) / (CG_N2 - CG_N1) ))"
    done
    echo
    echo "callgrind, $CG_N1 and $CG_N2 sequential keep-alive requests on one connection, the difference" \
        "divided by $((CG_N2 - CG_N1)); one worker each; $("$NGINX" -v 2>&1 | sed 's/^nginx version: //'), $(date -u +%Y-%m-%d)"
    exit 0
fi

TICKS=$(getconf CLK_TCK)

# utime + stime, in clock ticks, of a process (all its threads) and of its
# children (nginx's workers): fields 14 and 15 of /proc/PID/stat, counted
# after the command name in parentheses.
cpu_ticks() {
    local pids
    pids="$1 $(ps -o pid= --ppid "$1" | tr '\n' ' ')"
    for pid in $pids; do
        sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null || true
    done | awk '{ t += $12 + $13 } END { print t + 0 }'
}

# Each proxy must hand out the file whole before it is measured.
check_size() { # name port size
    local got
    got=$(curl -s -o /dev/null -w '%{size_download} %{http_code}' "http://127.0.0.1:$2/$3")
    if [ "$got" != "$3 200" ]; then
        echo "$1: GET /$3 gave $got (bytes, status)" >&2
        exit 1
    fi
}

run_one() { # size name port
    local size=$1 name=$2 port=$3 before after out requests rps us
    start_proxy "$name" "$port"
    check_size "$name" "$port" "$size"
    "${OTHERS_ON[@]}" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" "http://127.0.0.1:$port/$size" >/dev/null
    before=$(cpu_ticks "$PROXY_PID")
    out=$("${OTHERS_ON[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "http://127.0.0.1:$port/$size")
    after=$(cpu_ticks "$PROXY_PID")
    stop_proxy
    requests=$(echo "$out" | awk '/requests in/ { print $1 }')
    rps=$(echo "$out" | awk '/^Requests\/sec/ { print $2 }')
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "$out" | grep "Non-2xx\|Socket errors" | sed "s/^/$name $size: /" >&2
    fi
    us=$(awk -v t=$((after - before)) -v hz="$TICKS" -v n="$requests" \
        'BEGIN { printf "%.2f", t / hz / n * 1e6 }')
    printf '%s %s %s %s %s\n' "$size" "$name" "$rps" "$us" "$round" >>"$WORK/results"
    printf '| %s | %s | %s | %.0f | %s |\n' "$size" "$name" "$round" "$rps" "$us"
}

echo "| file bytes | proxy | round | requests/s | proxy CPU µs/request |"
echo "|---|---|---|---|---|"
for size in $SIZES; do
    for round in $(seq "$ROUNDS"); do
        run_one "$size" example "$PORT_EXAMPLE"
        run_one "$size" nginx "$PORT_NGINX"
    done
done

echo
echo "| file bytes | example requests/s | nginx requests/s | example CPU µs/req | nginx CPU µs/req | CPU ratio example / nginx | ratio round by round |"
echo "|---|---|---|---|---|---|---|"
for size in $SIZES; do
    awk -v size="$size" '
        $1 == size && $2 == "example" { ra += $3; ca += $4; na++; ea[$5] = $4 }
        $1 == size && $2 == "nginx" { rb += $3; cb += $4; nb++; eb[$5] = $4 }
        END {
            rounds = ""
            for (r = 1; r in ea && r in eb; r++)
                rounds = rounds (r > 1 ? ", " : "") sprintf("%.2f", ea[r] / eb[r])
            printf "| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %s |\n", size, ra / na, rb / nb, ca / na, cb / nb, (ca / na) / (cb / nb), rounds
        }' "$WORK/results"
done

echo
pinned=" nothing pinned, $WORKERS workers each;"
[ "$PIN" = 1 ] && pinned=" the proxy on CPU 0 (one worker), origin and wrk on CPU 1;"
echo "wrk -t1 -c$CONNECTIONS -d${DURATION}s after ${WARMUP}s of warm-up, $ROUNDS rounds A B A B;$pinned" \
    "$("$NGINX" -v 2>&1 | sed 's/^nginx version: //'), $(nproc) cores," \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)"
