"""The differential campaign: h1proto beside llhttp (httptools) and h11.

Generates inputs (generate.py), decodes each with h1proto (the example
`differential`, run once per batch), llhttp and h11 (peers.py), and sorts
every disagreement into a class and a decided difference (classify.py).
Prints a summary by class; minimized examples of every kind of
disagreement follow. Exits 1 when a disagreement is undecided, or h1proto's
outcome depended on how its input was cut.

Run it through scripts/differential.sh, which installs the pinned peers.
"""

import argparse
import collections
import json
import multiprocessing
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import classify  # noqa: E402
import generate  # noqa: E402
import peers  # noqa: E402
import rules  # noqa: E402,F401  (registers the decided differences)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Classes whose every disagreement must be decided (S is a difference
# between the peers, with h1proto on one side of it).
MUST_DECIDE = {"A", "A1", "A2", "B", "C", "C2", "split"}
# h1proto's side, built by scripts/differential.sh from dev/ (cargo's
# target directory, CARGO_TARGET_DIR when set).
DEFAULT_BINARY = os.path.join(
    ROOT, os.environ.get("CARGO_TARGET_DIR", "target"), "release", "differential"
)


def _line(side, raw, seed):
    return json.dumps({"side": side, "raw": raw.decode("latin-1"), "seed": seed})


def h1proto_batch(binary, inputs, first_seed):
    lines = "\n".join(_line(i["side"], i["raw"], first_seed + n) for n, i in enumerate(inputs))
    done = subprocess.run([binary], input=lines + "\n", capture_output=True, text=True,
                          encoding="utf-8", check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


class H1proto:
    """A long-running h1proto process for one input at a time (minimizing)."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary, "--line"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, encoding="utf-8")

    def run(self, side, raw, seed=1):
        self.proc.stdin.write(_line(side, raw, seed) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def judge(inp, p_out):
    """Class and decided difference of one input, with the three outcomes."""
    side = inp["side"]
    l_out = peers.llhttp(side, inp["raw"])
    h_out = peers.h11_run(side, inp["raw"])
    p = classify.normalize(side, p_out)
    l = classify.normalize(side, l_out)
    h = classify.normalize(side, h_out)
    cls = classify.classify(p, l, h)
    if cls == "agree":
        return cls, None, (p_out, l_out, h_out)
    why = classify.explain(inp, cls, p, l, h, p_out)
    if why == "undecided":
        # Apart by how each parse ended, so that each kind shows up.
        why = "undecided: h1proto %s, llhttp %s, h11 %s" % (
            p_out.get("error") or p[1], l[1], h[1])
    return cls, why, (p_out, l_out, h_out)


def work(job):
    binary, seed, index, count, keep = job
    inputs = generate.generate(seed * 1_000_003 + index, count)
    outs = h1proto_batch(binary, inputs, index * count)
    counts = collections.Counter()
    sides = collections.Counter()
    examples = {}
    splits = []
    for inp, p_out in zip(inputs, outs):
        sides[inp["side"]] += 1
        if p_out.get("split"):
            splits.append((inp, p_out["split"]))
            counts[("split", "undecided")] += 1
            continue
        cls, why, _ = judge(inp, p_out)
        counts[(cls, why)] += 1
        if cls != "agree":
            bucket = examples.setdefault((cls, why), [])
            if len(bucket) < keep:
                bucket.append(inp)
    return counts, sides, examples, splits[:keep]


def minimize(h1, inp, key):
    """Removes bytes from the input while its class and decided difference
    stay `key`."""
    side, raw, tags = inp["side"], inp["raw"], inp["tags"]

    def keeps(candidate):
        p_out = h1.run(side, candidate)
        if p_out.get("split"):
            return key[0] == "split"
        cls, why, _ = judge({"side": side, "raw": candidate, "tags": tags}, p_out)
        return (cls, why) == key

    size = max(1, len(raw) // 2)
    while True:
        progress = False
        i = 0
        while i < len(raw):
            candidate = raw[:i] + raw[i + size:]
            if candidate and keeps(candidate):
                raw = candidate
                progress = True
            else:
                i += size
        if size == 1 and not progress:
            break
        size = max(1, size // 2) if not progress else size
    return {"side": side, "raw": raw, "tags": tags}


def show(out):
    msgs = []
    for m in out["messages"]:
        start = " ".join(m["start"])
        body = m["body"]
        if isinstance(body, str):
            body = body.encode("latin-1")
        ka = "" if m["keep_alive"] else " close"
        tr = " +trailers" if m["trailers"] else ""
        msgs.append("[%s body=%r%s%s]" % (start, body, tr, ka))
    err = " (%s)" % out["error"] if out.get("error") else ""
    return "%s -> %s%s" % (" ".join(msgs) or "[]", out["end"], err)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=1_000_000, help="inputs to generate")
    ap.add_argument("--seed", type=int, default=1, help="campaign seed")
    ap.add_argument("--batch", type=int, default=10_000, help="inputs per h1proto run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--binary", default=DEFAULT_BINARY, help="h1proto's side (dev/src/bin/differential.rs, built)")
    ap.add_argument("--examples", type=int, default=1,
                    help="minimized examples shown per kind of disagreement")
    ap.add_argument("--show-decided", action="store_true",
                    help="also show examples of decided differences")
    ap.add_argument("--emit", metavar="FILE",
                    help="write the minimized examples as JSON lines to FILE")
    args = ap.parse_args()

    started = time.time()
    batches = (args.inputs + args.batch - 1) // args.batch
    jobs = []
    for index in range(batches):
        count = min(args.batch, args.inputs - index * args.batch)
        jobs.append((args.binary, args.seed, index, count, max(args.examples, 3)))
    counts = collections.Counter()
    sides = collections.Counter()
    examples = {}
    splits = []
    with multiprocessing.Pool(args.jobs) as pool:
        for c, s, e, sp in pool.imap_unordered(work, jobs):
            counts.update(c)
            sides.update(s)
            for key, found in e.items():
                bucket = examples.setdefault(key, [])
                bucket.extend(found[: max(args.examples, 3) - len(bucket)])
            splits.extend(sp)
    elapsed = time.time() - started

    total = sum(counts.values())
    by_class = collections.Counter()
    for (cls, _), n in counts.items():
        by_class[cls] += n
    print("differential campaign: %d inputs (%d requests, %d responses), seed %d, %.0f s"
          % (total, sides["request"], sides["response"], args.seed, elapsed))
    print("h1proto beside llhttp (httptools %s) and h11 %s"
          % (peers.httptools.__version__, peers.h11.__version__))
    order = ["agree", "A", "A1", "A2", "B", "C", "C2", "S", "split"]
    undecided = 0
    for cls in order:
        if not by_class[cls]:
            continue
        print("%-6s %9d" % (cls, by_class[cls]))
        if cls == "agree":
            continue
        for (c, why), n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            if c == cls:
                print("         %9d  %s" % (n, why or "-"))
                if cls in MUST_DECIDE and why.startswith("undecided"):
                    undecided += n
    print("undecided: %d" % undecided)

    shown = []
    h1 = H1proto(args.binary)
    try:
        for key in sorted(examples, key=str):
            cls, why = key
            open_ = cls in MUST_DECIDE and (why is None or why.startswith("undecided"))
            if not open_ and not args.show_decided and not args.emit:
                continue
            for inp in examples[key][: args.examples]:
                small = minimize(h1, inp, key)
                p_out = h1.run(small["side"], small["raw"])
                _, _, (p, l, h) = judge(small, p_out)
                shown.append({"class": cls, "rule": why, "side": small["side"],
                              "raw": small["raw"].decode("latin-1"), "tags": small["tags"],
                              "h1proto": show(p), "llhttp": show(l), "h11": show(h)})
                if open_ or args.show_decided:
                    print("\n[%s %s] %s %r  tags=%s" % (cls, why, small["side"], small["raw"],
                                                        ",".join(small["tags"])))
                    print("  h1proto: %s\n  llhttp:  %s\n  h11:     %s"
                          % (show(p), show(l), show(h)))
    finally:
        h1.close()
    for inp, how in splits[: args.examples]:
        print("\n[split] %s %r\n  %s" % (inp["side"], inp["raw"], how))
    if args.emit:
        with open(args.emit, "w") as f:
            for item in shown:
                f.write(json.dumps(item) + "\n")
    return 1 if undecided or by_class["split"] else 0


if __name__ == "__main__":
    sys.exit(main())
