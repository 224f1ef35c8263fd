#!/usr/bin/env bash
# The differential campaign: h1proto beside llhttp (through httptools) and
# h11 on generated requests and responses (docs/testing.md).
#
#   scripts/differential.sh                      # 10^6 inputs, summary by class
#   scripts/differential.sh --inputs 50000       # a short campaign
#   scripts/differential.sh --help               # every option of the driver
#
# Installs the pinned peers (scripts/differential/requirements.txt) into a
# virtual environment under target/, builds the h1proto side
# (dev/src/bin/differential.rs) in release mode, then runs the driver with the
# arguments given. Needs python3 with venv and pip, and network access to
# PyPI the first time. Exits non-zero when a disagreement is undecided.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=target/differential-venv
req=scripts/differential/requirements.txt
if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$req" "$venv/requirements.txt"; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        # Debian's python3 keeps venv in a package of its own.
        if command -v apt-get >/dev/null; then
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
        fi
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$venv/requirements.txt"
fi

cargo build --quiet --release -p h1proto-dev --bin differential
exec "$venv/bin/python" -u scripts/differential/run.py "$@"
