"""Inputs for the differential campaign: requests and responses built from a
valid message, then mutated where parsers decide framing.

Every input is a dict {"side", "raw" (bytes), "tags" (list of str)}; the tags
name the mutations applied, so a summary can say what a disagreement was
about. Generation is deterministic for a given random.Random state.
"""

import random

CRLF = b"\r\n"

METHODS = [b"GET", b"POST", b"PUT", b"HEAD", b"DELETE", b"OPTIONS", b"PATCH", b"CONNECT"]
ODD_METHODS = [b"get", b"FOO", b"M-SEARCH", b"G(T", b"GE T", b"", b"PRI"]
TARGETS = [b"/", b"/a/b?c=d", b"/x%20y", b"http://a.test/p", b"http://a.test", b"//a"]
ODD_TARGETS = [b"*", b"a.test:443", b"/a b", b"/a\x00", b"/\x7f", b"/#frag", b"", b"/a\tb",
               b"http://a.test:80/p?q", b"/\xff"]
VERSIONS = [b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.0"]
ODD_VERSIONS = [b"HTTP/1.2", b"HTTP/2.0", b"HTTP/0.9", b"http/1.1", b"HTTP/11", b"HTTP/1.01",
                b"HTTP/1", b"HTTP /1.1", b"HTTP/1.1 ", b"HTTP/3.0", b"HTTP/1.9"]

CL_VALUES = [b"+{n}", b"-{n}", b"0{n}", b"00{n}", b"{n} ", b" {n}", b"{n}\t", b"{n}, {n}", b"{n},{n}",
             b"{n}, {m}", b"{n} {n}", b"0x{n}", b"{n}.0", b"", b" ", b"99999999999999999999",
             b"18446744073709551615", b"18446744073709551616", b"{n}a", b"a{n}", b"\x0b{n}",
             b"{n}\x00", b",{n}", b"{n},"]
TE_VALUES = [b"chunked", b"Chunked", b"CHUNKED", b" chunked", b"chunked ", b"chunked,", b",chunked",
             b"chunked, ", b", chunked", b"chunked,,", b"gzip, chunked", b"chunked, gzip", b"identity",
             b"identity, chunked", b"chunked, chunked", b"xchunked", b"chunkedx", b"chunk", b"",
             b"chunked;q=1", b"chunked\x0b", b"\tchunked", b"chunked\t", b"deflate,chunked",
             b"chunked , ", b"cHuNkEd"]
CONN_VALUES = [b"close", b"Close", b"CLOSE", b"keep-alive", b"Keep-Alive", b"close, keep-alive",
               b"keep-alive, close", b",close", b"close,", b", , close", b"closed", b"clo se",
               b"upgrade", b"te, close", b"x-close", b"close\t", b" close", b"", b"keep-alive,",
               b"close ,keep-alive"]
EXTENSIONS = [b";a", b";a=b", b';a="b"', b"; a", b" ;a", b"\t;a", b";a =b", b";a= b", b";", b";;",
              b';a="b\\"c"', b";a=b;c", b";a=\x00", b";a\x7f", b';a="\x01"', b";a=b c", b" ", b"\t",
              b";a=", b";=b", b'; a="x" ', b";a;b=c;d=\"e\""]
CTLS = [b"\x00", b"\x0b", b"\x0c", b"\x7f", b"\r", b"\n", b"\x01", b"\x1f", b"\xff"]
BODY_ALPHABET = b"abcdefghXYZ0123456789 \r\n"


class Head:
    """A start line and field lines, each a list of byte pieces, kept apart
    so that mutations can work on structure before serialization."""

    def __init__(self, start, fields):
        self.start = start          # bytes, without the line end
        self.start_eol = CRLF
        self.fields = fields        # list of [name, sep, value, eol]
        self.end = CRLF             # the empty line
        self.lead = b""             # bytes before the start line

    def serialize(self):
        out = [self.lead, self.start, self.start_eol]
        for name, sep, value, eol in self.fields:
            out += [name, sep, value, eol]
        out.append(self.end)
        return b"".join(out)

    def find(self, lname):
        return [i for i, f in enumerate(self.fields) if f[0].strip().lower() == lname]


def body_bytes(rng, n):
    return bytes(rng.choice(BODY_ALPHABET) for _ in range(n))


def chunked_body(rng, body, tags, odd):
    """The chunked coding of `body`, with size-line variants when `odd`."""
    pieces = []
    i = 0
    while i < len(body):
        n = rng.randint(1, max(1, len(body) - i))
        pieces.append(body[i:i + n])
        i += n
    out = []
    for piece in pieces:
        size = b"%x" % len(piece)
        ext = b""
        data_end = CRLF
        line_end = CRLF
        if odd and rng.random() < 0.35:
            kind = rng.randrange(9)
            if kind == 0:
                size = b"0" * rng.randint(1, 20) + size
                tags.append("chunk:leading-zeros")
            elif kind == 1:
                size = size.upper() if rng.random() < 0.5 else b"0x" + size
                tags.append("chunk:size-form")
            elif kind == 2:
                size = rng.choice([b"+", b"-", b" ", b"\t"]) + size
                tags.append("chunk:size-prefix")
            elif kind == 3:
                ext = rng.choice(EXTENSIONS)
                tags.append("chunk:ext")
            elif kind == 4:
                size = b"%x" % (len(piece) + rng.choice([-1, 1, 16]))
                tags.append("chunk:size-mismatch")
            elif kind == 5:
                data_end = rng.choice([b"\n", b"", b"\r", b"X\r\n", b"\r\r\n"])
                tags.append("chunk:data-end")
            elif kind == 6:
                line_end = rng.choice([b"\n", b"\r", b" \r\n", b"\t\r\n"])
                tags.append("chunk:line-end")
            elif kind == 7:
                size = b"ffffffffffffffffff"
                tags.append("chunk:overflow")
            else:
                size = size + rng.choice([b" ", b"\t", b"x", b"\x00"])
                tags.append("chunk:size-suffix")
        out += [size, ext, line_end, piece, data_end]
    last = b"0"
    last_ext = b""
    if odd and rng.random() < 0.2:
        last = rng.choice([b"00", b"000", b"0 ", b" 0", b"0\t"])
        tags.append("chunk:last-form")
    if odd and rng.random() < 0.15:
        last_ext = rng.choice(EXTENSIONS)
        tags.append("chunk:last-ext")
    out += [last, last_ext, CRLF]
    if rng.random() < 0.25:
        trailer = rng.choice([b"X-T: 1", b"x-checksum: abc", b"Content-Length: 5",
                              b"Transfer-Encoding: chunked", b"X-T:1", b"X-T : 1",
                              b"X-T: a\r\n b", b"Bad Name: x", b"Connection: close"])
        out += [trailer, CRLF]
        tags.append("chunk:trailer")
    end = CRLF
    if odd and rng.random() < 0.1:
        end = rng.choice([b"\n", b"", b"\r"])
        tags.append("chunk:final-crlf")
    out.append(end)
    return b"".join(out)


def mutate_fields(rng, head, tags, framing):
    """One field mutation aimed at framing or connection handling."""
    kind = rng.randrange(10)
    targets = head.find(b"content-length") + head.find(b"transfer-encoding") + \
        head.find(b"connection")
    if not targets:
        targets = list(range(len(head.fields)))
    if not targets:
        return
    i = rng.choice(targets)
    f = head.fields[i]
    if kind == 0:
        dup = list(f)
        if rng.random() < 0.5 and f[0].lower() == b"content-length":
            dup[2] = b"%d" % rng.randint(0, 12)
        elif rng.random() < 0.3:
            dup[2] = b""
        head.fields.insert(rng.randint(0, len(head.fields)), dup)
        tags.append("field:duplicate")
    elif kind == 1:
        f[0] = bytes(c ^ 0x20 if (65 <= (c & 0xDF) <= 90 and rng.random() < 0.5) else c
                     for c in f[0])
        tags.append("field:case")
    elif kind == 2:
        where = rng.randrange(4)
        pad = rng.choice([b" ", b"\t", b"  ", b" \t"])
        if where == 0:
            f[2] = pad + f[2]
        elif where == 1:
            f[2] = f[2] + pad
        elif where == 2:
            f[0] = f[0] + pad
            tags.append("field:space-before-colon")
        else:
            f[0] = pad + f[0]
            tags.append("field:leading-space")
        tags.append("field:pad")
    elif kind == 3:
        # obs-fold: the value continues on the next line.
        cont = rng.choice([b" ", b"\t"])
        if rng.random() < 0.5:
            f[2] = b"" + CRLF + cont + f[2]
        else:
            f[2] = f[2] + CRLF + cont + rng.choice([b"x", b"chunked", b"5", b""])
        tags.append("field:obs-fold")
    elif kind == 4:
        ctl = rng.choice(CTLS)
        part = rng.choice([0, 2])
        s = f[part]
        at = rng.randint(0, len(s))
        f[part] = s[:at] + ctl + s[at:]
        tags.append("field:ctl-in-%s" % ("name" if part == 0 else "value"))
    elif kind == 5:
        n = rng.randint(0, 9)
        tmpl = rng.choice(CL_VALUES)
        value = tmpl.replace(b"{n}", b"%d" % n).replace(b"{m}", b"%d" % (n + 1))
        head.fields.append([b"Content-Length", b": ", value, CRLF])
        tags.append("cl:odd-value")
    elif kind == 6:
        head.fields.append([b"Transfer-Encoding", b": ", rng.choice(TE_VALUES), CRLF])
        tags.append("te:odd-value")
    elif kind == 7:
        name = rng.choice([b"Connection", b"Connection", b"Proxy-Connection", b"connection"])
        head.fields.append([name, b": ", rng.choice(CONN_VALUES), CRLF])
        tags.append("conn:%s" % name.decode().lower())
    elif kind == 8:
        f[3] = rng.choice([b"\n", b"\r", b"\r\r\n", b" \r\n"])
        tags.append("field:line-end")
    else:
        f[1] = rng.choice([b":", b":  ", b":\t", b" : ", b"", b"::"])
        tags.append("field:separator")


def request(rng):
    tags = []
    odd = rng.random() < 0.7
    method = rng.choice(METHODS)
    target = b"a.test:443" if method == b"CONNECT" else rng.choice(TARGETS)
    version = rng.choice(VERSIONS)
    if odd and rng.random() < 0.15:
        method = rng.choice(ODD_METHODS)
        tags.append("line:method")
    if odd and rng.random() < 0.15:
        target = rng.choice(ODD_TARGETS)
        tags.append("line:target")
    if odd and rng.random() < 0.15:
        version = rng.choice(ODD_VERSIONS)
        tags.append("line:version")
    sep1 = sep2 = b" "
    if odd and rng.random() < 0.08:
        sep1 = rng.choice([b"  ", b"\t", b""])
        sep2 = rng.choice([b" ", b"  ", b"\t"])
        tags.append("line:separators")
    fields = []
    if version != b"HTTP/1.0" or rng.random() < 0.3:
        fields.append([b"Host", b": ", b"a.test", CRLF])
    if rng.random() < 0.3:
        fields.append([b"User-Agent", b": ", b"diff/1", CRLF])
    body = body_bytes(rng, rng.choice([0, 0, 1, 5, 12]))
    framing = rng.choice(["none", "cl", "cl", "chunked", "chunked"])
    if method == b"CONNECT" and rng.random() < 0.5:
        framing = rng.choice(["none", "cl"])
    if framing == "cl":
        fields.append([b"Content-Length", b": ", b"%d" % len(body), CRLF])
    elif framing == "chunked":
        fields.append([b"Transfer-Encoding", b": ", b"chunked", CRLF])
    if rng.random() < 0.3:
        fields.append([b"Connection", b": ", rng.choice(CONN_VALUES[:6]), CRLF])
    rng.shuffle(fields)
    head = Head(method + sep1 + target + sep2 + version, fields)
    if odd:
        for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
            mutate_fields(rng, head, tags, framing)
        if rng.random() < 0.08:
            head.lead = rng.choice([CRLF, CRLF + CRLF, b"\n", b"\r", b" "])
            tags.append("line:leading")
        if rng.random() < 0.06:
            head.start_eol = rng.choice([b"\n", b"\r", b" \r\n"])
            tags.append("line:eol")
        if rng.random() < 0.04:
            head.end = rng.choice([b"\n", b"\r\r\n", b" \r\n"])
            tags.append("head:end")
    raw = head.serialize()
    if framing == "chunked":
        raw += chunked_body(rng, body, tags, odd)
    elif framing == "cl" or rng.random() < 0.5:
        raw += body
    return raw, tags, method


def second_request(rng):
    return rng.choice([
        b"GET /second HTTP/1.1\r\nHost: a.test\r\n\r\n",
        b"POST /second HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc",
        b"GET /admin HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n",
        b"0\r\n\r\n",
        b"GET /second HTTP/1.0\r\n\r\n",
    ])


def gen_request(rng):
    raw, tags, _ = request(rng)
    if rng.random() < 0.35:
        raw += second_request(rng)
        tags.append("pipelined")
    if rng.random() < 0.05:
        raw += rng.choice([b"\r", b"\r\n", b"\n", b"\r\n\r\n", b" "])
        tags.append("tail:stray")
    if rng.random() < 0.03:
        raw = byte_mutation(rng, raw)
        tags.append("bytes")
    return {"side": "request", "raw": raw, "tags": tags}


STATUSES = [b"200 OK", b"200 OK", b"404 Not Found", b"204 No Content", b"304 Not Modified",
            b"500 Internal Server Error", b"302 Found"]
ODD_STATUSES = [b"200", b"200 ", b"2000 OK", b"20 OK", b"099 X", b"600 X", b"200 O\x00K", b"200\tOK",
                b"999 Whatever", b"000 Zero", b"100 Continue", b"103 Early Hints", b" 200 OK",
                b"200  OK", b"-20 OK", b"2a0 OK"]


def response(rng):
    tags = []
    odd = rng.random() < 0.7
    version = rng.choice(VERSIONS)
    status = rng.choice(STATUSES)
    if odd and rng.random() < 0.15:
        status = rng.choice(ODD_STATUSES)
        tags.append("line:status")
    if odd and rng.random() < 0.1:
        version = rng.choice(ODD_VERSIONS)
        tags.append("line:version")
    fields = []
    if rng.random() < 0.3:
        fields.append([b"Server", b": ", b"diff/1", CRLF])
    body = body_bytes(rng, rng.choice([0, 1, 5, 12]))
    framing = rng.choice(["none", "cl", "cl", "cl", "chunked", "chunked"])
    if framing == "cl":
        fields.append([b"Content-Length", b": ", b"%d" % len(body), CRLF])
    elif framing == "chunked":
        fields.append([b"Transfer-Encoding", b": ", b"chunked", CRLF])
    if rng.random() < 0.3:
        fields.append([b"Connection", b": ", rng.choice(CONN_VALUES[:6]), CRLF])
    rng.shuffle(fields)
    head = Head(version + b" " + status, fields)
    if odd:
        for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
            mutate_fields(rng, head, tags, framing)
        if rng.random() < 0.05:
            head.start_eol = rng.choice([b"\n", b"\r", b" \r\n"])
            tags.append("line:eol")
        if rng.random() < 0.04:
            head.end = rng.choice([b"\n", b"\r\r\n", b" \r\n"])
            tags.append("head:end")
    raw = head.serialize()
    if framing == "chunked":
        raw += chunked_body(rng, body, tags, odd)
    else:
        raw += body
    return raw, tags


def gen_response(rng):
    raw, tags = response(rng)
    if rng.random() < 0.1:
        raw = b"HTTP/1.1 100 Continue\r\n\r\n" + raw
        tags.append("interim")
    if rng.random() < 0.35:
        raw += rng.choice([
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
        ])
        tags.append("pipelined")
    if rng.random() < 0.05:
        raw += rng.choice([b"\r", b"\r\n", b"\n", b" "])
        tags.append("tail:stray")
    if rng.random() < 0.03:
        raw = byte_mutation(rng, raw)
        tags.append("bytes")
    return {"side": "response", "raw": raw, "tags": tags}


def byte_mutation(rng, raw):
    """A blind byte-level change: insert, delete or replace one byte."""
    if not raw:
        return raw
    at = rng.randrange(len(raw))
    op = rng.randrange(3)
    b = rng.choice(b"\r\n \t:;,0aZ\x00\x7f\xff")
    if op == 0:
        return raw[:at] + bytes([b]) + raw[at:]
    if op == 1:
        return raw[:at] + raw[at + 1:]
    return raw[:at] + bytes([b]) + raw[at + 1:]


def generate(seed, count, responses_share=0.35):
    """`count` inputs from `seed`, deterministically."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        if rng.random() < responses_share:
            out.append(gen_response(rng))
        else:
            out.append(gen_request(rng))
    return out
