"""The decided differences between h1proto and its peers.

A rule explains why one peer (llhttp or h11) reached another outcome than
h1proto on an input, by what the input holds: `fn(inp, p, x, p_out)` with
the normalized outcomes of h1proto (`p`) and of that peer (`x`), and
h1proto's own outcome `p_out` (which names its error kind).
docs/security.md ("Differential testing") records every name with the
decision and its RFC basis.
"""

import re

from classify import rule

FIELD = re.compile(rb"(?:^|\n)([^\r\n:]*):([^\n]*)")
FORBIDDEN_TRAILERS = {b"content-length", b"transfer-encoding", b"connection", b"host",
                      b"trailer", b"te", b"keep-alive", b"upgrade", b"proxy-connection"}
# The methods llhttp knows (llhttp refuses any other token).
LLHTTP_METHODS = {b"DELETE", b"GET", b"HEAD", b"POST", b"PUT", b"CONNECT", b"OPTIONS", b"TRACE",
                  b"COPY", b"LOCK", b"MKCOL", b"MOVE", b"PROPFIND", b"PROPPATCH", b"SEARCH",
                  b"UNLOCK", b"BIND", b"REBIND", b"UNBIND", b"ACL", b"REPORT", b"MKACTIVITY",
                  b"CHECKOUT", b"MERGE", b"M-SEARCH", b"NOTIFY", b"SUBSCRIBE", b"UNSUBSCRIBE",
                  b"PATCH", b"PURGE", b"MKCALENDAR", b"LINK", b"UNLINK", b"SOURCE",
                  b"DESCRIBE", b"ANNOUNCE", b"SETUP", b"PLAY", b"PAUSE", b"TEARDOWN",
                  b"GET_PARAMETER", b"SET_PARAMETER", b"REDIRECT", b"RECORD", b"FLUSH", b"QUERY"}


def fields(raw, name):
    """Values of every line of `raw` that looks like a `name` field line."""
    out = []
    for m in FIELD.finditer(raw):
        if m.group(1).strip(b" \t").lower() == name:
            out.append(m.group(2).rstrip(b"\r"))
    return out


def err(p_out, *kinds):
    return p_out.get("error") in kinds


def lines(raw):
    return re.split(rb"\r?\n", raw)


def start_lines(raw):
    """Candidate start lines: the first line and every line after an
    empty one."""
    ls = lines(raw)
    out = [ls[0].lstrip(b"\r\n")] if ls else []
    for i in range(1, len(ls)):
        if ls[i - 1] in (b"", b"\r"):
            out.append(ls[i])
    return out


def methods(raw):
    out = []
    for line in start_lines(raw):
        m = re.match(rb"([^ \t]*)[ \t]", line)
        if m and not line.startswith(b"HTTP/"):
            out.append(m.group(1))
    return out


def without_verdicts(o):
    return tuple((s, b, t) for s, b, t, _ in o[0])


def same_but_verdicts(p, x):
    """The peer decoded the same messages as h1proto up to where one of
    them stopped, some with another keep-alive verdict."""
    pm, xm = without_verdicts(p), without_verdicts(x)
    n = min(len(pm), len(xm))
    return n > 0 and pm[:n] == xm[:n]


def first_difference(p, x):
    """The index of the first message h1proto and the peer decoded
    differently (or that only one of them decoded)."""
    pm, xm = p[0], x[0]
    for i in range(min(len(pm), len(xm))):
        if pm[i] != xm[i]:
            return i
    return min(len(pm), len(xm))


def token_elements(raw, name):
    return [t.strip(b" \t").lower() for v in fields(raw, name) for t in v.split(b",")]


# --- CONNECT -----------------------------------------------------------------

@rule("connect-with-content", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9110 section 9.3.6: a CONNECT request has no content. h1proto
    # refuses Transfer-Encoding or a non-zero Content-Length on it; llhttp
    # ends the message at the head (the body is tunnel data), h11 reads a body.
    return err(p_out, "ConnectWithContent")


# --- h1proto refuses where a peer accepts ---------------------------------------

@rule("te-in-http10", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 6.1: an HTTP/1.0 message with Transfer-Encoding has
    # faulty framing; h1proto refuses it rather than process it and close.
    return err(p_out, "TransferEncodingInHttp10")


@rule("asterisk-form-only-for-options", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 3.2.4: the asterisk-form is only used for OPTIONS.
    return err(p_out, "InvalidTarget") and any(
        re.match(rb"\S+[ \t]+\*[ \t]", line) and not line.startswith(b"OPTIONS")
        for line in start_lines(inp["raw"]))


@rule("no-fragment-in-target", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 3.2: origin-form = absolute-path [ "?" query ]; a
    # fragment is never sent (RFC 9110 section 7.1).
    return err(p_out, "InvalidTarget") and any(
        re.match(rb"\S+[ \t]+\S*#", line) for line in start_lines(inp["raw"]))


@rule("authority-form-needs-a-port", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 3.2.3: authority-form = uri-host ":" port, only for
    # CONNECT; and CONNECT takes only the authority-form.
    return err(p_out, "InvalidTarget") and any(
        line.startswith(b"CONNECT") for line in start_lines(inp["raw"]))


# uri-host [ ":" port ] of RFC 3986: an IP-literal in brackets or a
# reg-name (unreserved, sub-delims, pct-encoded), then digits for a port.
HOST_VALUE = re.compile(
    rb"(?:\[[0-9A-Fa-f:.]+\]|\[[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]"
    rb"|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::[0-9]*)?")


@rule("host-value-grammar", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 3.2: a server MUST answer 400 to a request whose Host
    # value is invalid; Host = uri-host [ ":" port ] (RFC 9110 section 7.2).
    return err(p_out, "InvalidHostValue") and any(
        not HOST_VALUE.fullmatch(v.strip(b" \t")) for v in fields(inp["raw"], b"host"))


@rule("status-line-needs-sp-after-code", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 4: status-line = HTTP-version SP status-code SP
    # [ reason-phrase ]; the second SP is not optional.
    return err(p_out, "InvalidStatus") and any(
        re.fullmatch(rb"HTTP/\d\.\d \d{3}\r?", line) for line in start_lines(inp["raw"]))


@rule("status-code-100-to-599", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9110 section 15: status codes are 100 to 599; RFC 9112 section 4:
    # status-code = 3DIGIT.
    return err(p_out, "InvalidStatus")


@rule("forbidden-trailer-field", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9110 section 6.5.1: framing, routing and connection fields cannot
    # be trailers; h1proto refuses them instead of dropping them silently.
    return err(p_out, "InvalidTrailer") and any(fields(inp["raw"], n) for n in FORBIDDEN_TRAILERS)


@rule("invalid-trailer-line", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 7.1.2: a trailer section is field lines; one that is
    # not a valid field line (no colon, space in the name, obs-fold) is
    # refused as in a head.
    return err(p_out, "InvalidTrailer")


@rule("chunk-ext-grammar", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name
    # [ BWS "=" BWS chunk-ext-val ] ); the name is a token (never empty) and
    # the value a token or a quoted-string.
    return err(p_out, "InvalidChunkExtension")


@rule("reason-phrase-characters", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 4: reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ).
    return err(p_out, "InvalidReason")


@rule("http-version-not-1x", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 2.3 and RFC 9110 section 2.5: an HTTP/1.1 server
    # answers a request of another major version with 505.
    return err(p_out, "UnsupportedVersion")


@rule("obs-fold-in-request", ("stricter",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9112 section 5.2: a server MUST reject obs-fold in a request (or
    # replace it, which h11 does).
    return err(p_out, "ObsFold")


@rule("bare-lf-refused", ("stricter",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9112 section 2.2: a recipient MAY recognize a bare LF as a line
    # terminator; h1proto does not (h11 does).
    return b"\n" in inp["raw"].replace(b"\r\n", b"")


@rule("content-length-one-value", ("stricter",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9110 section 8.6: a recipient MAY accept a list of equal
    # Content-Length values or repeated equal lines; h1proto (and llhttp)
    # refuse them, h11 keeps one.
    return err(p_out, "InvalidContentLength")


@rule("request-te-with-cl-refused", ("stricter",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9112 section 6.1: a server MAY reject a request with both
    # Transfer-Encoding and Content-Length (and MUST close after one it
    # accepts); h1proto and llhttp reject, h11 reads it chunked.
    return err(p_out, "ContentLengthWithTransferEncoding")


@rule("host-required", ("stricter",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request
    # without Host or with more than one.
    return err(p_out, "InvalidHost")


@rule("field-value-characters", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9110 section 5.5: a field value is VCHAR, obs-text, SP and HTAB;
    # CR, LF, NUL and other controls are refused (RFC 9112 section 2.2 for
    # a bare CR).
    return err(p_out, "InvalidFieldValue", "InvalidFieldName", "WhitespaceBeforeColon",
               "MissingColon")


@rule("transfer-coding-list", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 6.3 items 4: a request whose final coding is not
    # chunked is refused, and a coding that is not a token is invalid.
    return err(p_out, "InvalidTransferEncoding", "UnsupportedTransferCoding")


@rule("chunk-size-grammar", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 7.1: chunk-size = 1*HEXDIG, no sign, prefix or
    # whitespace, and it must fit in 64 bits.
    return err(p_out, "InvalidChunkSize", "MissingChunkCrlf")


@rule("request-line-grammar", ("stricter",))
def _(inp, p, x, p_out):
    # RFC 9112 section 3: request-line = method SP request-target SP
    # HTTP-version, single spaces, a token method, a target of its forms.
    return err(p_out, "InvalidMethod", "InvalidStartLine", "InvalidVersion", "InvalidTarget")


# --- keep-alive verdicts --------------------------------------------------------

@rule("http10-keep-alive", ("differ",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9112 section 9.3: an HTTP/1.0 connection persists with the
    # keep-alive option, as h1proto and llhttp read it; h11 never keeps an
    # HTTP/1.0 connection. A difference of verdict only.
    at = 2 if inp["side"] == "request" else 0
    return same_but_verdicts(p, x) and any(m[0][at] == "1.0" and not m[3] for m in x[0])


@rule("proxy-connection-ignored", ("differ",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9110 section 7.6.1: only Connection carries connection options;
    # Proxy-Connection is not a standard field. llhttp honours its close.
    return bool(fields(inp["raw"], b"proxy-connection")) and same_but_verdicts(p, x)


@rule("close-wins-over-keep-alive", ("differ",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9112 sections 9.3 and 9.6: with the close option the connection
    # does not persist, whatever else Connection lists; llhttp lets an
    # HTTP/1.0 keep-alive win over close.
    tokens = token_elements(inp["raw"], b"connection")
    return b"close" in tokens and b"keep-alive" in tokens


@rule("interim-response-verdict", ("differ",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9110 section 15.2: a 1xx response is followed by the final
    # response on the same connection; llhttp gives an HTTP/1.0 interim
    # response a verdict to close.
    return inp["side"] == "response" and same_but_verdicts(p, x) and any(
        m[0][1].startswith("1") and not m[3] for m in x[0])


# --- h1proto accepts where a peer refuses ---------------------------------------

@rule("bodiless-response-framing-ignored", ("looser", "differ"))
def _(inp, p, x, p_out):
    # RFC 9112 section 6.3 item 1 comes before items 3 to 5: a 1xx, 204 or
    # 304 response ends at its head whatever Content-Length or
    # Transfer-Encoding say, so their values frame nothing.
    if inp["side"] != "response":
        return False
    i = first_difference(p, x)
    return i < len(p[0]) and (p[0][i][0][1] in ("204", "304") or p[0][i][0][1].startswith("1"))


@rule("empty-list-elements", ("looser", "differ"))
def _(inp, p, x, p_out):
    # RFC 9110 section 5.6.1: a recipient MUST accept and ignore a
    # reasonable number of empty list elements ("chunked,", ", chunked", a
    # second empty Transfer-Encoding line).
    tes = fields(inp["raw"], b"transfer-encoding")
    return bool(tes) and b"" in [e.strip(b" \t") for v in tes for e in v.split(b",")]


@rule("bws-in-chunk-extension", ("looser",))
def _(inp, p, x, p_out):
    # RFC 9112 section 7.1.1: BWS is allowed before ";" and around "=" in a
    # chunk extension ("5 ;a", "5; a = b"); llhttp and h11 refuse it.
    return bool(re.search(rb"(?:^|\n)[0-9a-fA-F]+[ \t]*;[^\r\n]*[ \t]", inp["raw"]) or
                re.search(rb"(?:^|\n)[0-9a-fA-F]+[ \t]+;", inp["raw"]))


@rule("chunk-size-any-number-of-digits", ("looser",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9112 section 7.1: chunk-size = 1*HEXDIG, and recipients MUST
    # anticipate large numerals and prevent overflow. Leading zeros are in
    # the grammar and leave the value unambiguous: h1proto accepts any
    # number of digits whose value fits in 64 bits (the line is bounded by
    # max_chunk_line_bytes) and refuses only an overflow. h11 caps the size
    # at 20 digits by its regex; llhttp accepts leading zeros as h1proto does.
    return any(len(m.group(1)) > 20 and len(m.group(1).lstrip(b"0")) <= 16
               for m in re.finditer(rb"(?:^|\n)([0-9a-fA-F]+)", inp["raw"]))


@rule("response-te-with-cl-closes", ("looser", "differ"))
def _(inp, p, x, p_out):
    # RFC 9112 section 6.3 item 3: in a response, Transfer-Encoding
    # overrides Content-Length and the message ought to be handled as an
    # error: h1proto reads it chunked and then closes the connection; llhttp
    # refuses it, h11 reads it chunked and keeps the connection.
    raw = inp["raw"]
    return inp["side"] == "response" and bool(fields(raw, b"transfer-encoding")) and \
        bool(fields(raw, b"content-length"))


@rule("response-coding-not-chunked-is-close-delimited", ("looser", "differ"))
def _(inp, p, x, p_out):
    # RFC 9112 section 6.3 item 4: a response whose final transfer coding is
    # not chunked is read until the connection closes; h11 supports only
    # chunked and refuses.
    return inp["side"] == "response" and bool(fields(inp["raw"], b"transfer-encoding"))


@rule("method-is-any-token", ("looser",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9110 section 9.1: method = token, and the set is extensible;
    # llhttp refuses methods it does not know, and reads PRI as the start
    # of the HTTP/2 preface.
    decoded = [m[0][0].encode("latin-1") for m in p[0]] if inp["side"] == "request" else []
    return any(m and m not in LLHTTP_METHODS for m in methods(inp["raw"]) + decoded)


@rule("http09-not-supported", ("differ",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9112 section 2.3 / RFC 9110 section 2.5: h1proto speaks HTTP/1.x
    # only; llhttp reads "GET /" without a version as HTTP/0.9.
    return any(m[0][2] == "0.9" for m in x[0]) if inp["side"] == "request" else False


@rule("higher-minor-version", ("looser",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9110 section 2.5: a message of a higher minor version of HTTP/1
    # (HTTP/1.2, HTTP/1.9) is processed as HTTP/1.1; strict llhttp refuses.
    return bool(re.search(rb"HTTP/1\.[2-9]", inp["raw"]))


@rule("obs-fold-in-response-replaced", ("looser",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9112 section 5.2: a user agent that receives obs-fold in a
    # response MUST replace it with SP; llhttp refuses it.
    return inp["side"] == "response" and bool(re.search(rb"\r\n[ \t]", inp["raw"]))


@rule("empty-line-before-request", ("looser",), peers=("h11",))
def _(inp, p, x, p_out):
    # RFC 9112 section 2.2: a server SHOULD ignore at least one empty line
    # (CRLF) before a request-line; h11 refuses it.
    raw = inp["raw"]
    return inp["side"] == "request" and (raw.startswith(b"\r\n") or raw.endswith(b"\r\n") or
                                         b"\r\n\r\n\r\n" in raw)


@rule("te-value-trimmed", ("looser", "differ"), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9110 section 5.5: a field value excludes leading and trailing
    # whitespace; llhttp reads "chunked<HTAB>" as another coding.
    return any(v != v.strip(b" \t") for v in fields(inp["raw"], b"transfer-encoding"))


# --- how parsing ends -------------------------------------------------------------

@rule("stray-cr-after-message", ("stricter", "differ"))
def _(inp, p, x, p_out):
    # A CR after the last message may start the empty line RFC 9112 section
    # 2.2 lets a server skip: h1proto waits for its LF (and refuses anything
    # else), llhttp drops it, h11 refuses it.
    return inp["raw"].endswith(b"\r") and p[0] == x[0]


@rule("bare-lf-before-start-line", ("stricter",), peers=("llhttp",))
def _(inp, p, x, p_out):
    # RFC 9112 section 2.2: only CRLF counts as the empty line a server may
    # skip before a request-line, and none before a status-line; llhttp
    # skips a bare LF, or CR, too.
    return err(p_out, "InvalidStartLine") or p[1] == "error" and p[0] == x[0]
