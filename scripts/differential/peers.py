"""The two peer parsers, driven in-process: llhttp (through httptools, in its
default strict mode) and h11. Each returns an outcome in the same shape as
h1proto's side of the harness (dev/src/bin/differential.rs):

    {"messages": [{"start": [...], "body": bytes, "trailers": [(name, value)],
                   "keep_alive": bool}],
     "end": "complete" | "pending" | "body" | "error" | "tunnel" | "switched",
     "error": str | None}

Requests are read as a server reads them; responses as a client that sent
GET requests, one per response.
"""

import h11
import httptools


def _version(v):
    return v.decode("latin-1") if isinstance(v, bytes) else str(v)


class _LLHTTP:
    """Callbacks of one httptools parser."""

    def __init__(self, side):
        self.side = side
        self.messages = []
        self.cur = None
        if side == "request":
            self.parser = httptools.HttpRequestParser(self)
        else:
            self.parser = httptools.HttpResponseParser(self)

    def on_message_begin(self):
        self.cur = {"url": b"", "start": None, "body": bytearray(), "trailers": [],
                    "headers_done": False}

    def on_url(self, url):
        self.cur["url"] += url

    def on_header(self, name, value):
        if self.cur["headers_done"]:
            self.cur["trailers"].append((name.lower(), value))

    def on_headers_complete(self):
        cur = self.cur
        cur["headers_done"] = True
        version = self.parser.get_http_version()
        if self.side == "request":
            cur["start"] = [self.parser.get_method().decode("latin-1"),
                            cur["url"].decode("latin-1"), version]
        else:
            cur["start"] = [version, str(self.parser.get_status_code())]

    def on_body(self, body):
        self.cur["body"] += body

    def on_message_complete(self):
        cur = self.cur
        self.messages.append({
            "start": cur["start"],
            "body": bytes(cur["body"]),
            "trailers": cur["trailers"],
            "keep_alive": bool(self.parser.should_keep_alive()),
        })
        self.cur = None


def llhttp(side, raw):
    cb = _LLHTTP(side)
    end, error = None, None
    try:
        cb.parser.feed_data(raw)
    except httptools.HttpParserUpgrade:
        last = cb.messages[-1]["start"] if cb.messages else None
        end = "tunnel" if side == "request" and last and last[0] == "CONNECT" else "switched"
    except httptools.HttpParserError as e:
        end, error = "error", "%s: %s" % (type(e).__name__, e)
    if end is None:
        if cb.cur is None:
            end = "complete"
        else:
            end = "body" if cb.cur["headers_done"] else "pending"
    return {"messages": cb.messages, "end": end, "error": error}


def _h11_fields(headers):
    return [(bytes(n), bytes(v)) for n, v in headers]


def h11_requests(raw):
    conn = h11.Connection(h11.SERVER)
    messages = []
    cur = None
    try:
        conn.receive_data(raw)
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA or ev is h11.PAUSED:
                data, _ = conn.trailing_data
                end = "body" if cur is not None else ("pending" if data else "complete")
                return {"messages": messages, "end": end, "error": None}
            if isinstance(ev, h11.Request):
                cur = {"start": [ev.method.decode("latin-1"), ev.target.decode("latin-1"),
                                 _version(ev.http_version)],
                       "body": bytearray(), "trailers": []}
            elif isinstance(ev, h11.Data):
                cur["body"] += ev.data
            elif isinstance(ev, h11.EndOfMessage):
                cur["body"] = bytes(cur["body"])
                cur["trailers"] = _h11_fields(ev.headers)
                # The connection's verdict after this request (h11 keeps one
                # flag for the whole connection; nothing is read after False).
                cur["keep_alive"] = bool(conn._cstate.keep_alive)
                messages.append(cur)
                connect = cur["start"][0] == "CONNECT"
                cur = None
                if connect:
                    # Accept the tunnel: what follows is not HTTP.
                    conn.send(h11.Response(status_code=200, headers=[]))
                    return {"messages": messages, "end": "tunnel", "error": None}
                conn.send(h11.Response(status_code=200, headers=[(b"content-length", b"0")]))
                conn.send(h11.EndOfMessage())
                if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                    conn.start_next_cycle()
            elif isinstance(ev, h11.ConnectionClosed):
                return {"messages": messages, "end": "complete", "error": None}
    except (h11.RemoteProtocolError, h11.LocalProtocolError) as e:
        return {"messages": messages, "end": "error", "error": "%s: %s" % (type(e).__name__, e)}


_GET = h11.Request(method=b"GET", target=b"/", headers=[(b"host", b"a.test")])


def h11_responses(raw):
    conn = h11.Connection(h11.CLIENT)
    messages = []
    cur = None
    try:
        conn.send(_GET)
        conn.send(h11.EndOfMessage())
        conn.receive_data(raw)
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA or ev is h11.PAUSED:
                data, _ = conn.trailing_data
                end = "body" if cur is not None else ("pending" if data else "complete")
                return {"messages": messages, "end": end, "error": None}
            if isinstance(ev, h11.InformationalResponse):
                messages.append({"start": [_version(ev.http_version), str(ev.status_code)],
                                 "body": b"", "trailers": [], "keep_alive": True})
            elif isinstance(ev, h11.Response):
                cur = {"start": [_version(ev.http_version), str(ev.status_code)],
                       "body": bytearray(), "trailers": []}
            elif isinstance(ev, h11.Data):
                cur["body"] += ev.data
            elif isinstance(ev, h11.EndOfMessage):
                cur["body"] = bytes(cur["body"])
                cur["trailers"] = _h11_fields(ev.headers)
                cur["keep_alive"] = bool(conn._cstate.keep_alive)
                messages.append(cur)
                cur = None
                if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                    conn.start_next_cycle()
                    conn.send(_GET)
                    conn.send(h11.EndOfMessage())
            elif isinstance(ev, h11.ConnectionClosed):
                return {"messages": messages, "end": "complete", "error": None}
    except (h11.RemoteProtocolError, h11.LocalProtocolError) as e:
        return {"messages": messages, "end": "error", "error": "%s: %s" % (type(e).__name__, e)}


def h11_run(side, raw):
    return h11_requests(raw) if side == "request" else h11_responses(raw)
