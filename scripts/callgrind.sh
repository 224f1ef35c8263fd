#!/usr/bin/env bash
# Instructions per message for h1proto and the baselines, counted with
# valgrind's callgrind: repeatable where timings on a shared machine are not.
#
#   scripts/callgrind.sh            # the whole decoding table
#   scripts/callgrind.sh encode     # encoding and server exchanges instead
#   scripts/callgrind.sh chunked    # chunked bodies, per 64 KiB of data
#   scripts/callgrind.sh wire       # what the wire view costs decoding and encoding
#   scripts/perf.sh                 # every figure the speed goals name, with their targets
#   N1=200 N2=2200 scripts/callgrind.sh
#
# Each (operation, message) is run twice, with N1 and N2 iterations; the
# difference of the two instruction totals divided by N2 - N1 is the cost of
# one iteration in steady state (start-up, set-up and the first iterations,
# where buffers grow, cancel out). See dev/src/bin/callgrind_probe.rs for what
# each operation does.
set -euo pipefail
# --help: the comment above, which says what this measures and how.
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi

cd "$(dirname "$0")/.."
N1=${N1:-200}
N2=${N2:-1200}
TARGET=${CARGO_TARGET_DIR:-target}

command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install -y valgrind)" >&2; exit 1; }
PROBE="$TARGET/release/callgrind_probe"
if [ "${1:-}" = chunked ]; then
    PROBE="$TARGET/release/chunked_probe"
    cargo build --release -p h1proto-dev --bin chunked_probe >&2
else
    cargo build --release -p h1proto-dev --bin callgrind_probe >&2
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Total instructions of one run.
instructions() {
    local out="$WORK/out"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$PROBE" "$@" >/dev/null 2>"$WORK/err" \
        || { cat "$WORK/err" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

per_message() {
    local a b
    a=$(instructions "$1" "$2" "$N1")
    b=$(instructions "$1" "$2" "$N2")
    echo $(( (b - a) / (N2 - N1) ))
}

if [ "${1:-}" = chunked ]; then
    # 64 KiB of data per iteration in 4 KiB and 64-byte chunks
    # (dev/src/bin/chunked_probe.rs); the copy of the wire bytes into a new
    # buffer (`refill`) is taken out of every column.
    N1=${N1C:-10}
    N2=${N2C:-60}
    echo '| chunks | h1proto | httparse | memchr | h1proto per chunk | httparse per chunk | h1proto / memchr |'
    echo '|---|---|---|---|---|---|---|'
    for c in 4096 64; do
        refill=$(per_message refill "$c")
        h=$(( $(per_message h1proto "$c") - refill ))
        p=$(( $(per_message httparse "$c") - refill ))
        m=$(( $(per_message memchr "$c") - refill ))
        n=$(( 65536 / c ))
        echo "| $n x $c B | $h | $p | $m | $(( h / n )) | $(( p / n )) | $(awk -v a="$h" -v b="$m" 'BEGIN { printf "%.2f", a / b }') |"
    done
    echo
    echo "instructions per 64 KiB of body data (callgrind Ir), N2=$N2 - N1=$N1 iterations;" \
         "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(rustc --version), $(date -u +%Y-%m-%d)"
    exit 0
fi

MESSAGES="curl_get browser_get pico_703 post_json response_nginx response_cdn"

if [ "${1:-}" = encode ]; then
    # Each message re-encoded from its decoded head (`encode`), and for
    # requests the whole exchange on a ServerConnection (`server`).
    echo '| message | encode | server exchange |'
    echo '|---|---|---|'
    for m in $MESSAGES; do
        case $m in response_*) server='' ;; *) server=$(per_message server "$m") ;; esac
        echo "| $m | $(per_message encode "$m") | $server |"
    done
    echo
    echo "instructions per message (callgrind Ir), N2=$N2 - N1=$N1 iterations;" \
         "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(rustc --version), $(date -u +%Y-%m-%d)"
    exit 0
fi
if [ "${1:-}" = wire ]; then
    # Decoding with the wire view on (unread, then read), and encoding
    # with it, beside the same operations without it.
    pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }'; }
    echo '| message | h1proto | +wire | +wire, read | encode | encode+wire |'
    echo '|---|---|---|---|---|---|'
    declare -A total v
    for m in $MESSAGES; do
        row="| $m"
        for op in h1proto h1proto+wire h1proto+wire+read encode encode+wire; do
            v[$op]=$(per_message "$op" "$m")
            total[$op]=$(( ${total[$op]:-0} + ${v[$op]} ))
        done
        echo "$row | ${v[h1proto]} | ${v[h1proto+wire]} ($(pct "${v[h1proto]}" "${v[h1proto+wire]}")) | ${v[h1proto+wire+read]} ($(pct "${v[h1proto]}" "${v[h1proto+wire+read]}")) | ${v[encode]} | ${v[encode+wire]} ($(pct "${v[encode]}" "${v[encode+wire]}")) |"
    done
    for op in h1proto h1proto+wire h1proto+wire+read encode encode+wire; do
        total[$op]=$(( ${total[$op]} / 6 ))
    done
    echo "| mix (mean of 6) | ${total[h1proto]} | ${total[h1proto+wire]} ($(pct "${total[h1proto]}" "${total[h1proto+wire]}")) | ${total[h1proto+wire+read]} ($(pct "${total[h1proto]}" "${total[h1proto+wire+read]}")) | ${total[encode]} | ${total[encode+wire]} ($(pct "${total[encode]}" "${total[encode+wire]}")) |"
    echo
    echo "instructions per message (callgrind Ir), N2=$N2 - N1=$N1 iterations;" \
         "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(rustc --version), $(date -u +%Y-%m-%d)"
    exit 0
fi
# httparse+http is the zero-copy baseline, built as hyper builds it;
# httparse+http-copy builds the same types by copying (a second, slower
# baseline).
OPS="h1proto h1proto+recycle h1proto-fresh refill httparse httparse+http httparse+http-copy memchr"

# Speed-ups: the baseline's instructions divided by h1proto's (above 1:
# h1proto is faster).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }

printf '| message | %s | %s | %s | %s | %s | %s | %s | %s | speed-up vs httparse+http | with recycle | fresh |\n' $OPS
echo '|---|---|---|---|---|---|---|---|---|---|---|---|'
declare -A sum
for m in $MESSAGES; do
    row="| $m"
    declare -A v
    for op in $OPS; do
        v[$op]=$(per_message "$op" "$m")
        sum[$op]=$(( ${sum[$op]:-0} + ${v[$op]} ))
        row="$row | ${v[$op]}"
    done
    echo "$row | $(ratio "${v[h1proto]}" "${v[httparse+http]}") | $(ratio "${v[h1proto+recycle]}" "${v[httparse+http]}") | $(ratio "${v[h1proto-fresh]}" "${v[httparse+http]}") |"
done
row="| mix (mean of 6)"
for op in $OPS; do
    row="$row | $(( ${sum[$op]} / 6 ))"
done
echo "$row | $(ratio "${sum[h1proto]}" "${sum[httparse+http]}") | $(ratio "${sum[h1proto+recycle]}" "${sum[httparse+http]}") | $(ratio "${sum[h1proto-fresh]}" "${sum[httparse+http]}") |"
echo
echo "instructions per message (callgrind Ir), N2=$N2 - N1=$N1 iterations;" \
     "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(rustc --version), $(date -u +%Y-%m-%d)"
