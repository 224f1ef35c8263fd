#!/usr/bin/env bash
# The size of the public API, from the rustdoc of the crate with every
# feature on: the items a user can name (structs, enums, traits, type
# aliases, functions, macros, constants; modules apart), and the methods
# they carry (inherent methods and a trait's own methods, not the methods
# of trait implementations such as `Debug` or `Buf`).
#
#   scripts/api-count.sh            # prints "items N, methods M"
#   VERBOSE=1 scripts/api-count.sh  # and each item with its method count
set -euo pipefail
shopt -s inherit_errexit

cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
cargo doc --no-deps --all-features -q >&2
python3 - "$TARGET/doc/h1proto" "${VERBOSE:-0}" <<'PY'
import os, re, sys
root, verbose = sys.argv[1], sys.argv[2] == "1"
kinds = ("struct", "enum", "trait", "type", "fn", "macro", "constant")
items, methods = 0, 0
for dirpath, _, files in os.walk(root):
    for name in sorted(files):
        kind = name.split(".", 1)[0]
        if kind not in kinds or not name.endswith(".html"):
            continue
        html = open(os.path.join(dirpath, name), encoding="utf-8").read()
        if 'http-equiv="refresh"' in html:
            continue  # a re-export's redirect
        items += 1
        own = html.split('id="trait-implementations"', 1)[0]
        own = own.split('id="synthetic-implementations"', 1)[0]
        own = own.split('id="blanket-implementations"', 1)[0]
        n = len(set(re.findall(r'id="(?:ty)?method\.(\w+)', own)))
        methods += n
        if verbose:
            print(f"{os.path.relpath(os.path.join(dirpath, name), root)}: {n}")
print(f"items {items}, methods {methods}")
PY
