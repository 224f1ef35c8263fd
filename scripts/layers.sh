#!/usr/bin/env bash
# The layers of src/, bottom to top, and the check that no module imports
# from a layer above its own, nor two modules of one layer from each other.
# An import is any `crate::` or `super::` path in code (a `use` line, a
# `use crate::{a, b::C}` group, a path written inline); a name the crate
# root re-exports (`crate::Config`) counts as an import of the module that
# defines it. Doc links are not imports. Run from anywhere in the repository:
#
#   scripts/layers.sh           # fails, naming each import that breaks the order
#   scripts/layers.sh --graph   # also prints every import between modules
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
# Bottom to top. Modules on one line are one layer: either may import the
# other, but not both ways. `adapter` (the runtime adapters and the
# runtime-neutral driver, the only code that reads a clock or does I/O) is
# on top: nothing of the core imports from it.
LAYERS = """
role grammar limits keep_alive date segments
leniency reason
error
framing chunk_ext
head
wire
decode encode
config
conn
session
adapter
"""
import os, re, sys
SRC = "src"

def strip(text):
    # remove comments and string/char literals, keep newlines and braces of code
    out = []; i = 0; n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i); j = n if j < 0 else j
            i = j; continue
        if text.startswith("/*", i):
            depth = 1; i += 2
            while i < n and depth:
                if text.startswith("/*", i): depth += 1; i += 2
                elif text.startswith("*/", i): depth -= 1; i += 2
                else:
                    if text[i] == "\n": out.append("\n")
                    i += 1
            continue
        m = re.match(r'b?r(#*)"', text[i:i+10])
        if m:
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            out.append('""'); out.append("\n" * text.count("\n", i, j)); i = j + len(end); continue
        if c == '"' or (c == 'b' and text.startswith('b"', i) and not (i and (text[i-1].isalnum() or text[i-1]=='_'))):
            j = i + (2 if c == 'b' else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""'); out.append("\n" * text.count("\n", i, j)); i = j + 1; continue
        if c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:i+12])
            if m: out.append("''"); i += len(m.group(0)); continue
        out.append(c); i += 1
    return "".join(out)

def file_module(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel == ["lib"]: return []
    if rel[-1] == "mod": rel = rel[:-1]
    if rel == ["framing_table"]: return ["framing", "table"]
    return rel

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

def parse_tree(s, i):
    """Parse a use tree at s[i:]; return (list of first-segment paths as lists, end)."""
    while i < len(s) and s[i].isspace(): i += 1
    if i < len(s) and s[i] == "{":
        i += 1; paths = []
        while True:
            while i < len(s) and s[i] in " \t\n,": i += 1
            if i >= len(s) or s[i] == "}": return paths, i + 1
            sub, i = parse_tree(s, i); paths += sub
    if i < len(s) and s[i] == "*": return [["*"]], i + 1
    m = re.compile(IDENT).match(s, i)
    if not m: return [], i
    name = m.group(0); i = m.end()
    j = i
    while j < len(s) and s[j].isspace(): j += 1
    if s.startswith("::", j):
        sub, i = parse_tree(s, j + 2)
        return [[name] + p for p in sub], i
    return [[name]], i

def root_exports():
    text = strip(open(os.path.join(SRC, "lib.rs")).read())
    mods = set(re.findall(r"\bmod\s+(" + IDENT + r")\s*;", text))
    names = {}
    for m in re.finditer(r"\bpub\s+use\s+", text):
        paths, _ = parse_tree(text, m.end())
        for p in paths:
            if p and p[0] in mods:
                names[p[-1]] = p[0]
    return mods, names

def edges():
    mods, names = root_exports()
    out = []  # (from_top, to_top, file, line, in_test)
    for root, _, files in os.walk(SRC):
        for f in sorted(files):
            if not f.endswith(".rs"): continue
            path = os.path.join(root, f)
            base = file_module(path)
            if not base: continue
            s = strip(open(path, encoding="utf-8").read())
            # inline module stack: (name, depth at which it closes, is_test)
            stack = []; depth = 0; i = 0; test_pending = False
            test_file = bool(re.search(r"^\s*#!\[cfg\(test\)\]", s, re.M))
            while i < len(s):
                c = s[i]
                if c == "{": depth += 1; i += 1; continue
                if c == "}":
                    depth -= 1
                    while stack and stack[-1][1] > depth: stack.pop()
                    i += 1; continue
                if s.startswith("#[cfg(test)]", i): test_pending = True; i += 12; continue
                m = re.compile(r"\bmod\s+(" + IDENT + r")\s*\{").match(s, i)
                if m and (i == 0 or not (s[i-1].isalnum() or s[i-1] == "_")):
                    stack.append((m.group(1), depth + 1, test_pending)); test_pending = False
                    depth += 1; i = m.end(); continue
                if c == ";": test_pending = False
                m = re.compile(r"(\$?)\b(crate|super)((?:\s*::\s*super)*)\s*::").match(s, i)
                if m and (i == 0 or not (s[i-1].isalnum() or s[i-1] in "_:")):
                    if m.group(1): i = m.end(); continue
                    modpath = base + [x[0] for x in stack]
                    if m.group(2) == "crate": start = []
                    else:
                        k = 1 + m.group(3).count("super")
                        start = modpath[:len(modpath) - k]
                    paths, end = parse_tree(s, m.end())
                    line = s.count("\n", 0, i) + 1
                    in_test = test_file or any(x[2] for x in stack)
                    for p in paths:
                        full = start + p
                        if not full or full[0] == "*": 
                            tgt = None
                        elif full[0] in mods: tgt = full[0]
                        elif full[0] in names: tgt = names[full[0]]
                        else: tgt = None
                        if tgt and tgt != base[0]:
                            out.append((base[0], tgt, path, line, in_test, "::".join(full)))
                    i = max(end, m.end()); continue
                i += 1
    return mods, out


mods, es = edges()
layers = [line.split() for line in LAYERS.strip().splitlines()]
level = {m: i for i, line in enumerate(layers) for m in line}
problems = []
for m in sorted(mods - set(level)):
    problems.append(f"{m}: a module of src/ missing from LAYERS")
for m in sorted(set(level) - mods):
    problems.append(f"{m}: in LAYERS but not a module of src/")
seen = {}
for a, b, path, line, _, full in es:
    seen.setdefault((a, b), (path, line, full))
for (a, b), (path, line, full) in sorted(seen.items()):
    if a not in level or b not in level:
        continue
    if level[b] > level[a]:
        problems.append(f"{path}:{line}: {a} imports {full} from {b}, a layer above")
    elif level[b] == level[a] and (b, a) in seen:
        problems.append(f"{path}:{line}: {a} imports {full} from {b}, which imports {a} back")
if "--graph" in sys.argv:
    for (a, b), (path, line, full) in sorted(seen.items(), key=lambda e: (-level.get(e[0][0], 0), e[0])):
        print(f"{a:>10} -> {b:<10} {path}:{line} {full}")
for p in problems:
    print(p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"src/: {len(mods)} modules in {len(layers)} layers, no import upward")
PY
