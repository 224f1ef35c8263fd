#!/usr/bin/env bash
# Fuzzing from a fresh clone (docs/testing.md, "Fuzzing"): installs
# cargo-fuzz, writes the seed corpora, builds the targets and runs each one
# in turn for a number of executions or a time, one core at a time.
#
#   scripts/fuzz.sh                          # every target, 10^6 executions each
#   scripts/fuzz.sh --runs 10000000          # every target, 10^7 executions each
#   scripts/fuzz.sh --time 600 lenient       # one target for 10 minutes
#   scripts/fuzz.sh --install                # install and build only
#   scripts/fuzz.sh --list                   # the targets
#
# The toolchain: the default one (stable is enough), no sanitizer
# (`-s none`). Without a sanitizer, cargo-fuzz instruments the build with
# flags a stable rustc takes (`-Cpasses=sancov-module`, `-Cllvm-args=...`,
# `--cfg fuzzing`), so a machine that cannot download a nightly toolchain
# still fuzzes. h1proto is `#![forbid(unsafe_code)]`: AddressSanitizer
# would only watch the dependencies' unsafe code, at a large cost in
# executions. `--sanitizer address` builds with it; that needs
# `-Zsanitizer`, which the script lets a stable rustc take with
# RUSTC_BOOTSTRAP=1 (the runtime ships with the standard library).
# `--toolchain nightly` uses an installed nightly (`cargo +nightly`).
#
# Each run prints one summary line per target (executions, edge coverage,
# features, corpus size, executions per second) and keeps libFuzzer's log in
# fuzz/logs/<target>.log. Corpora grow in fuzz/corpus/<target>/ and resume
# from there. A crash ends that target's run (the others still run, and the
# script exits 1); its input is in fuzz/artifacts/<target>/ (what to do
# next: docs/testing.md). corpus/, artifacts/ and logs/ are ignored by git.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

CARGO_FUZZ_VERSION=0.13.2

runs=1000000
time=""
max_len=4096
sanitizer=none
toolchain=""
install_only=false
list_only=false
targets=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --time) time=$2; shift 2 ;;
        --max-len) max_len=$2; shift 2 ;;
        --sanitizer) sanitizer=$2; shift 2 ;;
        --toolchain) toolchain=$2; shift 2 ;;
        --install) install_only=true; shift ;;
        --list) list_only=true; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done

cargo_cmd=(cargo)
if [[ -n $toolchain ]]; then
    cargo_cmd=(cargo "+$toolchain")
elif [[ $sanitizer != none ]]; then
    # -Zsanitizer, nightly-only, on a stable rustc.
    export RUSTC_BOOTSTRAP=1
fi

# 1. cargo-fuzz, from crates.io (a few minutes the first time), and a C++
# compiler for libFuzzer itself (libfuzzer-sys builds it from source).
if ! command -v c++ >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++
fi
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    echo "==> installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install --locked --version "$CARGO_FUZZ_VERSION" cargo-fuzz
fi

all_targets=()
while read -r t; do all_targets+=("$t"); done < <(cd fuzz && cargo fuzz list)
if $list_only; then
    printf '%s\n' "${all_targets[@]}"
    exit 0
fi
if ((${#targets[@]} == 0)); then
    targets=("${all_targets[@]}")
fi
for t in "${targets[@]}"; do
    printf '%s\n' "${all_targets[@]}" | grep -qx "$t" || {
        echo "no target $t (targets: ${all_targets[*]})" >&2
        exit 2
    }
done

# 2. Seed corpora from tests/corpus/*.jsonl: the replay test writes them
# (and checks them, with every saved regression, as plain `cargo test` does).
echo "==> seeds (tests/differential/fuzz_corpus.rs)"
H1PROTO_FUZZ_SEEDS=$root/fuzz/corpus cargo test --quiet --test differential fuzz_corpus >/dev/null

# 3. Build every target once, instrumented, release with debug assertions
# and overflow checks (cargo-fuzz's default).
echo "==> building ($(${cargo_cmd[@]} --version 2>/dev/null || true), sanitizer $sanitizer)"
(cd fuzz && "${cargo_cmd[@]}" fuzz build -s "$sanitizer")
$install_only && exit 0

# 4. Each target in turn, in one process on one core (no -jobs/-workers:
# with them libFuzzer forks workers that log to fuzz-N.log instead).
mkdir -p fuzz/logs
if [[ -n $time ]]; then
    budget=(-max_total_time="$time")
else
    budget=(-runs="$runs")
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo "+changes" || true)
printf '==> fuzzing commit %s%s: %s\n' "$commit" "$dirty" "${budget[*]}"
printf '%-18s %12s %7s %7s %7s %8s %s\n' target executions cov ft corpus exec/s result
status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    log=fuzz/logs/$t.log
    start=$SECONDS
    set +e
    (cd fuzz && "${cargo_cmd[@]}" fuzz run -s "$sanitizer" "$t" "corpus/$t" -- \
        "${budget[@]}" -max_len="$max_len" -dict=http.dict \
        -print_final_stats=1) >"$log" 2>&1
    rc=$?
    set -e
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -n1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    # libFuzzer's corpus (units kept in memory; the directory also holds
    # inputs that reductions replaced).
    corpus=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
    if ((rc == 0)); then
        result="ok ($((SECONDS - start)) s)"
    else
        status=1
        artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n1)
        result="FAILED (exit $rc): ${artifact:-see $log}"
    fi
    printf '%-18s %12s %7s %7s %7s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "${corpus:-?}" "${rate:-?}" "$result"
done
exit $status
