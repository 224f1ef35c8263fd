#!/usr/bin/env bash
# Code lines of src/, per file and in all: no blank lines, no comments (doc
# comments included), no `#[cfg(test)]` items, no file that is a test
# module (`#![cfg(test)]`). Run from anywhere in the
# repository:
#
#   scripts/loc.sh            # the total, then the 10 largest files
#   scripts/loc.sh --all      # every file
#   MAX=600 scripts/loc.sh    # also fail if a file has more than 600
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os, re, sys

def code_lines(text):
    n, depth_skip, in_block = 0, None, 0
    pending_cfg_test = False
    depth = 0
    for raw in text.splitlines():
        line = raw.strip()
        # Block comments (/* ... */, /** ... */), possibly nested.
        if in_block:
            in_block += line.count("/*") - line.count("*/")
            continue
        if line.startswith("/*"):
            in_block = line.count("/*") - line.count("*/")
            continue
        if not line or line.startswith("//"):
            continue
        # Strip a trailing comment only to count braces (strings with // are rare in src/).
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        code = re.sub(r"'(\\.|[^'\\])'", "''", code)
        code = code.split("//", 1)[0]
        opens, closes = code.count("{"), code.count("}")
        if depth_skip is not None:
            depth += opens - closes
            if depth <= depth_skip:
                depth_skip = None
            continue
        if line.startswith("#![cfg(test)]") and depth == 0:
            return 0  # the whole file is a test module
        if line.startswith("#[cfg(test)]"):
            pending_cfg_test = True
            continue
        if pending_cfg_test:
            if line.startswith("#["):
                continue
            pending_cfg_test = False
            if opens > closes:
                depth_skip = depth
                depth += opens - closes
            continue  # a single-line item: skipped too
        depth += opens - closes
        n += 1
    return n

rows = []
for root, _, files in os.walk("src"):
    for f in files:
        if f.endswith(".rs"):
            p = os.path.join(root, f)
            with open(p, encoding="utf-8") as fh:
                rows.append((code_lines(fh.read()), p))
rows.sort(reverse=True)
total = sum(n for n, _ in rows)
print(f"src/: {total} code lines in {len(rows)} files")
for n, p in rows if "--all" in sys.argv else rows[:10]:
    print(f"{n:6} {p}")
limit = int(os.environ.get("MAX", "0"))
over = [p for n, p in rows if limit and n > limit]
if over:
    print(f"over {limit} code lines: {', '.join(over)}", file=sys.stderr)
    sys.exit(1)
PY
