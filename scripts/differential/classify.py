"""Comparing outcomes: normalization, the classes of a disagreement, and the
decided differences (each with its RFC basis, recorded in docs/security.md).

Classes, seen from h1proto (P) beside llhttp (L) and h11 (H):

    agree   all three reach the same outcome
    A       P accepts and frames differently from a peer that accepts too:
            A   both peers accept and agree with each other against P
            A1  one peer frames as P does, the other accepts and differs
            A2  P differs from the only peer that accepts (the other refuses)
    B       P accepts what both peers refuse
    C       P refuses what both peers accept with the same framing
            (C2: both accept, but frame it differently from each other)
    S       P agrees with one peer; the other is stricter or looser alone
    split   h1proto's outcome depends on how the input was cut (a bug)

"Refuse" means the parse ends in an error before what the other parser
decoded; an outcome is the list of complete messages (start line, body,
trailers, keep-alive verdict) and how parsing ended.
"""

import re


def _norm_version(v):
    m = re.fullmatch(r"(\d)\.(\d)", v)
    if m and m.group(1) == "1" and int(m.group(2)) >= 1:
        return "1.1"
    return v


def _norm_target(t):
    # http::Uri writes an absolute-form target without a path with "/".
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", t)
    if m:
        rest = m.group(3)
        if not rest.startswith("/"):
            rest = "/" + rest
        return "%s://%s%s" % (m.group(1).lower(), m.group(2), rest)
    return t


def _to_bytes(v):
    return v.encode("latin-1") if isinstance(v, str) else bytes(v)


def normalize(side, outcome):
    """A hashable, comparable form of an outcome."""
    msgs = []
    for m in outcome["messages"]:
        start = list(m["start"])
        if side == "request":
            start[1] = _norm_target(start[1])
            start[2] = _norm_version(start[2])
        else:
            start[0] = _norm_version(start[0])
        trailers = tuple(sorted((_to_bytes(n).lower(), _to_bytes(v).strip(b" \t"))
                                for n, v in m["trailers"]))
        msgs.append((tuple(start), _to_bytes(m["body"]), trailers, bool(m["keep_alive"])))
    end = outcome["end"]
    if end == "pending":
        # Bytes that are not a head yet: h1proto judges a start line once
        # it is complete, llhttp byte by byte. Neither took a message.
        end = "error"
    if side == "request" and msgs and msgs[-1][0][0] == "CONNECT":
        # Nothing after a CONNECT is HTTP, whatever a parser does with it.
        end = "tunnel"
    elif msgs and not msgs[-1][3] and end != "switched":
        # Nothing after a message that closes the connection counts.
        end = "closed"
    return (tuple(msgs), end)


def relation(p, x):
    """How h1proto's outcome p stands to a peer's outcome x."""
    if p == x:
        return "same"
    pm, pe = p
    xm, xe = x
    n = min(len(pm), len(xm))
    if pm[:n] == xm[:n]:
        if len(pm) < len(xm) and pe == "error":
            return "stricter"
        if len(xm) < len(pm) and xe == "error":
            return "looser"
        if len(pm) == len(xm):
            if pe == "error" and xe != "error":
                return "stricter"
            if xe == "error" and pe != "error":
                return "looser"
    return "differ"


def classify(p, l, h):
    """The class of h1proto's outcome p beside llhttp's l and h11's h."""
    rl, rh = relation(p, l), relation(p, h)
    if rl == rh == "same":
        return "agree"
    if rl == rh == "looser":
        return "B"
    if rl == rh == "stricter":
        return "C" if l == h else "C2"
    accepts = {"L": l[1] != "error" or len(l[0]) > len(p[0]),
               "H": h[1] != "error" or len(h[0]) > len(p[0])}
    if "differ" in (rl, rh):
        if rl == rh == "differ":
            return "A" if l == h else "A1"
        other = rh if rl == "differ" else rl
        if other == "same":
            return "A1"
        return "A2"
    # One peer as P, the other alone stricter or looser; or P between them.
    del accepts
    return "S"


# Decided differences. A rule explains why one peer's outcome differs from
# h1proto's, by what the input holds; a disagreement is decided when every
# peer that differs is explained. The names are what docs/security.md
# records, each with its decision and RFC basis.
RULES = []


def rule(name, when, peers=("llhttp", "h11")):
    """Registers a rule for disagreements where h1proto stands to the peer
    as one of `when` ("stricter", "looser", "differ": see `relation`)."""
    def register(fn):
        RULES.append((name, peers, when, fn))
        return fn
    return register


def explain(inp, cls, p, l, h, p_out):
    """The decided differences that explain a disagreement, joined by " + ",
    or "undecided". `p`, `l`, `h` are normalized outcomes; `p_out` is
    h1proto's own (with its error kind)."""
    names = []
    for peer, x in (("llhttp", l), ("h11", h)):
        if x == p:
            continue
        rel = relation(p, x)
        for name, peers, when, fn in RULES:
            if peer in peers and rel in when and fn(inp, p, x, p_out):
                if name not in names:
                    names.append(name)
                break
        else:
            return "undecided"
    return " + ".join(names)
