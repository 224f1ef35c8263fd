#!/usr/bin/env bash
# The size of h1proto's public API, as `cargo doc` shows it (stable Rust:
# the HTML rustdoc writes, no nightly JSON). Run from anywhere in the
# repository:
#
#   scripts/public-api.sh          # the counts
#   scripts/public-api.sh --list   # and every item and method, one a line
#
# What is counted (what rustdoc documents, so `#[doc(hidden)]` items and
# anything not reachable from outside the crate are left out):
#
# - items: every entry of rustdoc's "List of all items" (all.html: structs,
#   enums, unions, traits, functions, type aliases, constants, statics,
#   macros), each once at its documented path however often it is
#   re-exported, plus every public module but the crate root;
# - methods: the associated functions (methods and constructors) of the
#   inherent impls on each struct, enum and union page, and the methods
#   (required and provided) each of the crate's public traits declares.
#   A method in an impl of a type alias (`impl ServerConnection`) is the
#   aliased type's, counted once on that type's page, not again on the
#   alias's. Methods of trait impls (`Buf for Segments`, `Debug`, `From`,
#   and the crate's own traits implemented by its types) are the trait's
#   and are not counted again; associated constants are not methods.
#
# A count of the API as "78 items with 212 methods" takes
# the all.html entries without modules, and the inherent methods alone.
# The second line of the output gives those parts.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo doc --no-deps --all-features --quiet
target=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
exec python3 - "$target/doc/h1proto" "$@" <<'PY'
import html, os, re, signal, sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is fine

root, args = sys.argv[1], sys.argv[2:]
listing = "--list" in args
if set(args) - {"--list"}:
    sys.exit("usage: scripts/public-api.sh [--list]")

def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()

# all.html: one <h3 id="KIND">Title</h3><ul class="all-items"> per kind.
all_html = read("all.html")
items = []  # (kind, path, page)
for m in re.finditer(r'<h3 id="([^"]+)">([^<]+)</h3><ul class="all-items">(.*?)</ul>', all_html, re.S):
    kind = m.group(2)
    for href, name in re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', m.group(3)):
        items.append((kind, html.unescape(name), href))
if not items:
    sys.exit(f"no items found in {root}/all.html: has rustdoc's HTML changed?")

# Public modules: each has a page of its own (`path/index.html`).
modules = []
for dirpath, _, files in os.walk(root):
    rel = os.path.relpath(dirpath, root)
    if rel != "." and "index.html" in files:
        modules.append(rel.replace(os.sep, "::"))
items += [("Modules", path, None) for path in sorted(modules)]

def section(page, start, ends):
    """The text from the element with id `start` to the first of `ends`."""
    i = page.find(f'id="{start}"')
    if i < 0:
        return ""
    stops = [j for j in (page.find(f'id="{e}"', i + 1) for e in ends) if j > 0]
    return page[i:min(stops, default=len(page))]

INHERENT_END = ["trait-implementations", "synthetic-implementations", "blanket-implementations"]
TRAIT_END = ["implementors", "dyn-compatibility", "object-safety", "foreign-impls"]

# all.html's section titles, one item each.
SINGULAR = {"Structs": "Struct", "Enums": "Enum", "Unions": "Union", "Traits": "Trait",
            "Functions": "Function", "Type Aliases": "Type alias", "Constants": "Constant",
            "Statics": "Static", "Macros": "Macro", "Modules": "Module"}

methods = []  # (path, name, where)
for kind, path, href in items:
    if href is None:
        continue
    page_name = os.path.basename(href)
    if page_name.startswith(("struct.", "enum.", "union.")):
        page = read(href)
        text = section(page, "implementations-list", INHERENT_END)
        found = [(n, "inherent") for n in re.findall(r'<section id="method\.([^"]+)"', text)]
    elif page_name.startswith("trait."):
        page = read(href)
        text = section(page, "required-methods", ["provided-methods"] + TRAIT_END)
        text += section(page, "provided-methods", TRAIT_END)
        found = [(n, "trait") for n in re.findall(r'<section id="(?:ty)?method\.([^"]+)"', text)]
    else:
        continue
    # A second method of the same name on one page (two impls) is `name-1`.
    methods += [(path, re.sub(r"-\d+$", "", n), w) for n, w in found]
if not any(w == "inherent" for _, _, w in methods):
    sys.exit("no inherent method found: has rustdoc's HTML changed?")

if listing:
    for kind, path, _ in items:
        print(f"{SINGULAR.get(kind, kind).lower()}\t{path}")
    for path, name, where in methods:
        print(f"method\t{path}::{name}\t{where}")

kinds = {}
for kind, _, _ in items:
    kinds[kind] = kinds.get(kind, 0) + 1
inherent = sum(1 for m in methods if m[2] == "inherent")
print(f"{len(items)} items, {len(methods)} methods")
print(
    "items: "
    + ", ".join(f"{n} {k.lower()}" for k, n in sorted(kinds.items()))
    + f" ({len(items) - kinds.get('Modules', 0)} without modules); "
    + f"methods: {inherent} inherent, {len(methods) - inherent} declared by the crate's traits"
)
PY
