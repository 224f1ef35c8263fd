//! The example proxy between a raw client and scripted raw-socket
//! upstreams that record every byte they receive: what it forwards, what
//! it removes and adds, the messages without a body, interim responses,
//! trailers, bad and silent upstreams, the connection pool and its
//! retries, and the timeouts of both sides.

use h1proto_test_support::proxy as proxy_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::Method;
use proxy_support::{Client, Upstream, get, ok, start_proxy, start_proxy_with, unused_addr};

/// An upstream that answers every request with `hi`, keeping the
/// connection.
fn answering() -> Upstream {
    Upstream::start(|conn| {
        while conn.read_request().is_some() {
            conn.write(&ok("hi"));
        }
    })
}

#[test]
fn requests_go_through_one_pooled_upstream_connection() {
    let upstream = answering();
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    for path in ["/a", "/b", "/c"] {
        let got = client.request(&Method::GET, &get(path));
        assert_eq!((got.status(), &got.body[..]), (200, &b"hi"[..]));
        assert_eq!(got.header("via"), Some("1.1 h1proto-proxy"));
    }
    // A second client reuses the same idle upstream connection.
    let mut other = Client::connect(proxy.addr);
    assert_eq!(other.request(&Method::GET, &get("/d")).status(), 200);
    assert_eq!(upstream.accepted(), 1);
    let received = String::from_utf8(upstream.received().remove(0)).unwrap();
    for path in ["/a", "/b", "/c", "/d"] {
        assert!(
            received.contains(&format!("GET {path} HTTP/1.1\r\n")),
            "{received}"
        );
    }
    assert_eq!(received.matches("Host: example.com\r\n").count(), 4);
    assert_eq!(received.matches("via: 1.1 h1proto-proxy\r\n").count(), 4);
}

#[test]
fn hop_by_hop_fields_are_removed_both_ways_and_via_is_added() {
    let upstream = Upstream::start(|conn| {
        let Some(req) = conn.read_request() else {
            return;
        };
        let h = req.head.headers();
        for hop in [
            "connection",
            "x-hop",
            "keep-alive",
            "proxy-connection",
            "te",
            "upgrade",
        ] {
            assert!(!h.contains_key(hop), "{hop} reached the upstream: {req:?}");
        }
        assert_eq!(h["x-end"], "kept");
        let via: Vec<_> = h.get_all("via").iter().collect();
        assert_eq!(via, ["1.1 front", "1.1 h1proto-proxy"], "{req:?}");
        conn.write(
            b"HTTP/1.1 200 OK\r\nConnection: X-Secret\r\nX-Secret: s\r\n\
              Keep-Alive: timeout=5\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\
              Via: 1.0 origin\r\nX-Resp: kept\r\nContent-Length: 2\r\n\r\nok",
        );
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::GET,
        b"GET / HTTP/1.1\r\nHost: example.com\r\nConnection: keep-alive, X-Hop\r\n\
          X-Hop: 1\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nTE: trailers\r\n\
          Upgrade: websocket\r\nVia: 1.1 front\r\nX-End: kept\r\n\r\n",
    );
    assert_eq!((got.status(), &got.body[..]), (200, &b"ok"[..]));
    let h = got.head.headers();
    for hop in ["connection", "x-secret", "keep-alive"] {
        assert!(
            !h.contains_key(hop),
            "{hop} reached the client:\n{}",
            got.raw
        );
    }
    assert_eq!(h["x-resp"], "kept");
    let via: Vec<_> = h.get_all("via").iter().collect();
    assert_eq!(via, ["1.0 origin", "1.1 h1proto-proxy"]);
    // Repeated fields stay apart, in order.
    let raw = got.raw.to_ascii_lowercase();
    let a = raw.find("set-cookie: a=1\r\n").expect(&got.raw);
    let b = raw.find("set-cookie: b=2\r\n").expect(&got.raw);
    assert!(a < b, "{}", got.raw);
    drop(client);
    assert!(upstream.wait_idle(), "an upstream assertion failed");
}

/// A `Host` that `Connection` lists is removed as hop-by-hop, and the
/// request then gets the upstream's, as one that came without any.
#[test]
fn a_host_listed_in_connection_is_replaced_by_the_upstreams() {
    let (tx, rx) = std::sync::mpsc::channel();
    let upstream = Upstream::start(move |conn| {
        let Some(req) = conn.read_request() else {
            return;
        };
        let hosts: Vec<_> = req.head.headers().get_all("host").iter().cloned().collect();
        tx.send(hosts).unwrap();
        conn.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::GET,
        b"GET / HTTP/1.1\r\nHost: example.com\r\nConnection: Host\r\n\r\n",
    );
    assert_eq!((got.status(), &got.body[..]), (200, &b"ok"[..]));
    let hosts = rx.recv().unwrap();
    assert_eq!(hosts, [upstream.addr.to_string()], "{hosts:?}");
    drop(client);
    assert!(upstream.wait_idle(), "an upstream assertion failed");
}

#[test]
fn repeated_request_fields_stay_apart_and_in_order() {
    let upstream = Upstream::start(|conn| {
        if let Some(req) = conn.read_request() {
            let multi: Vec<_> = req.head.headers().get_all("x-multi").iter().collect();
            let body = format!("{multi:?}\n{}", req.raw_head);
            conn.write(&ok(&body));
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::GET,
        b"GET / HTTP/1.1\r\nHost: a\r\nX-Multi: 1\r\nCookie: c=1\r\nX-Multi: 2, 3\r\n\r\n",
    );
    let seen = String::from_utf8(got.body).unwrap();
    assert!(seen.starts_with(r#"["1", "2, 3"]"#), "{seen}");
    assert!(
        seen.ends_with(
            "\nGET / HTTP/1.1\r\nHost: a\r\nX-Multi: 1\r\nCookie: c=1\r\nX-Multi: 2, 3\r\n\
                        via: 1.1 h1proto-proxy\r\n\r\n"
        ),
        "{seen}"
    );
}

/// The field lines a raw head holds, in order.
fn field_lines(head: &str) -> Vec<&str> {
    let head = &head[..head.find("\r\n\r\n").expect("a whole head")];
    head.split("\r\n").skip(1).collect()
}

#[test]
fn field_order_and_spelling_go_through_both_ways() {
    let upstream = Upstream::start(|conn| {
        let Some(req) = conn.read_request() else {
            return;
        };
        // Everything end-to-end in its place and spelling, the hop-by-hop
        // fields gone, the proxy's own after them.
        assert_eq!(
            field_lines(&req.raw_head),
            [
                "X-Request-ID: 1",
                "host: example.com",
                "Accept: */*",
                "X-multi: a",
                "COOKIE: c=1",
                "x-MULTI: b",
                "Content-Length: 3",
                "Cookie: c=2",
                "via: 1.1 h1proto-proxy",
            ],
            "{}",
            req.raw_head
        );
        assert!(req.raw_head.starts_with("POST /a%2Fb?Q=1 HTTP/1.1\r\n"));
        conn.write(
            b"HTTP/1.1 201 Made Here\r\nset-cookie: a=1\r\nServer: up\r\nConnection: X-Secret\r\n\
              Set-Cookie: b=2; Path=/\r\nX-Secret: s\r\nTransfer-Encoding: chunked\r\n\
              Keep-Alive: timeout=5\r\nETAG: \"x\"\r\nSET-COOKIE: c=3\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        );
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::POST,
        b"POST /a%2Fb?Q=1 HTTP/1.1\r\nX-Request-ID: 1\r\nhost: example.com\r\n\
          Connection: keep-alive, X-Hop\r\nAccept: */*\r\nX-multi: a\r\nX-Hop: 1\r\n\
          COOKIE: c=1\r\nTE: trailers\r\nx-MULTI: b\r\nContent-Length: 3\r\n\
          Proxy-Connection: keep-alive\r\nCookie: c=2\r\n\r\nabc",
    );
    assert_eq!((got.status(), &got.body[..]), (201, &b"ok"[..]));
    assert!(
        got.raw.starts_with("HTTP/1.1 201 Made Here\r\n"),
        "{}",
        got.raw
    );
    // The three Set-Cookie lines apart and in place; the body framed
    // again for the client, after the proxy's `Via` and the `Date` a
    // forwarding recipient with a clock adds where the origin sent none
    // (RFC 9110 section 6.6.1).
    let mut lines = field_lines(&got.raw);
    let date = lines.remove(6);
    assert!(
        date.starts_with("date: ") && date.ends_with(" GMT") && date.len() == 35,
        "{date}"
    );
    assert_eq!(
        lines,
        [
            "set-cookie: a=1",
            "Server: up",
            "Set-Cookie: b=2; Path=/",
            "ETAG: \"x\"",
            "SET-COOKIE: c=3",
            "via: 1.1 h1proto-proxy",
            "transfer-encoding: chunked",
        ],
        "{}",
        got.raw
    );
    drop(client);
    assert!(upstream.wait_idle(), "an upstream assertion failed");
}

#[test]
fn trailers_are_forwarded_both_ways() {
    let upstream = Upstream::start(|conn| {
        while let Some(req) = conn.read_request() {
            let trailer = req
                .trailers
                .as_ref()
                .and_then(|t| t.get("x-checksum"))
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            let body = String::from_utf8(req.body).unwrap();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nTrailer: X-Digest\r\nTransfer-Encoding: chunked\r\n\r\n\
                 {:x}\r\n{body}\r\n0\r\nX-Digest: got {trailer}\r\n\r\n",
                body.len()
            );
            conn.write(reply.as_bytes());
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::POST,
        b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n\
          5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n",
    );
    assert_eq!((got.status(), &got.body[..]), (200, &b"hello"[..]));
    assert_eq!(got.header("trailer"), Some("X-Digest"));
    let trailers = got.trailers.expect("response trailers");
    assert_eq!(trailers["x-digest"], "got abc");

    // An HTTP/1.0 client cannot receive trailers: the body comes
    // close-delimited, without them and without `Trailer`.
    let mut old = Client::connect(proxy.addr);
    let got = old.request(
        &Method::POST,
        b"POST /up HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello",
    );
    assert_eq!((got.status(), &got.body[..]), (200, &b"hello"[..]));
    assert!(got.trailers.is_none());
    assert!(got.header("trailer").is_none(), "{}", got.raw);
    assert!(got.header("transfer-encoding").is_none(), "{}", got.raw);
}

/// Trailers go on as received both ways: in order, in their spelling,
/// the lines of one name apart and in place (the sessions' wire view of
/// the trailer section, sent with `finish_in_order`).
#[test]
fn trailers_keep_their_order_and_spelling_both_ways() {
    const UP: &str = "0\r\nX-B: 1\r\nx-a: 2\r\nX-b: 3\r\nSERVER-TIMING: db;dur=5\r\n\r\n";
    const DOWN: &str = "0\r\nX-Sum: 1\r\nx-trace: a\r\nX-SUM: 2\r\n\r\n";
    let upstream = Upstream::start(|conn| {
        while conn.read_request().is_some() {
            let reply =
                format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n{UP}");
            conn.write(reply.as_bytes());
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let request = format!(
        "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n{DOWN}"
    );
    let got = client.request(&Method::POST, request.as_bytes());
    assert_eq!((got.status(), &got.body[..]), (200, &b"ok"[..]));
    assert!(got.raw.ends_with(UP), "{}", got.raw);
    // The upstream answered after reading the whole request.
    let received = String::from_utf8(upstream.received().remove(0)).unwrap();
    assert!(received.ends_with(DOWN), "{received}");
}

/// The upstream answers with the extensions of each chunk of the request
/// it received (as its body) and extensions of its own.
#[test]
fn chunk_extensions_are_forwarded_both_ways_with_their_data() {
    let upstream = Upstream::start(|conn| {
        while conn.read_request().is_some() {
            conn.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                  2;name=\"a b\"\r\nhi\r\n0;end=1\r\n\r\n",
            );
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::POST,
        b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
          5;sig=ab12\r\nhello\r\n0;done\r\n\r\n",
    );
    assert_eq!((got.status(), &got.body[..]), (200, &b"hi"[..]));
    assert!(
        got.raw
            .contains("\r\n\r\n2;name=\"a b\"\r\nhi\r\n0;end=1\r\n\r\n"),
        "{}",
        got.raw
    );
    // The upstream answered: it has the whole request.
    let up = String::from_utf8(upstream.received().concat()).unwrap();
    assert!(
        up.contains("\r\n\r\n5;sig=ab12\r\nhello\r\n0;done\r\n\r\n"),
        "{up}"
    );

    // An HTTP/1.0 client gets the body close-delimited: no chunks, so no
    // extensions.
    let mut old = Client::connect(proxy.addr);
    let got = old.request(&Method::GET, b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!((got.status(), &got.body[..]), (200, &b"hi"[..]));
    assert!(!got.raw.contains("name="), "{}", got.raw);
}

#[test]
fn head_204_and_304_carry_no_body_and_keep_the_connection() {
    let upstream = Upstream::start(|conn| {
        while let Some(req) = conn.read_request() {
            let reply: &[u8] = match (req.head.method().as_str(), req.head.uri().path()) {
                ("HEAD", _) => b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
                (_, "/204") => b"HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n",
                (_, "/304") => {
                    b"HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 1000\r\n\r\n"
                }
                _ => b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody",
            };
            conn.write(reply);
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(&Method::HEAD, b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(got.status(), 200);
    assert_eq!(got.header("content-length"), Some("1000"));
    assert!(got.body.is_empty());
    let got = client.request(&Method::GET, &get("/204"));
    assert_eq!(got.status(), 204);
    assert!(got.header("content-length").is_none() && got.header("transfer-encoding").is_none());
    let got = client.request(&Method::GET, &get("/304"));
    assert_eq!(got.status(), 304);
    assert_eq!(got.header("etag"), Some("\"v1\""));
    assert_eq!(got.header("content-length"), Some("1000"));
    // Nothing stray was left between the messages.
    let got = client.request(&Method::GET, &get("/"));
    assert_eq!((got.status(), &got.body[..]), (200, &b"body"[..]));
    assert!(got.raw.starts_with("HTTP/1.1 200 OK\r\n"), "{}", got.raw);
}

#[test]
fn interim_responses_are_relayed_to_http11_clients_only() {
    let upstream = Upstream::start(|conn| {
        while conn.read_request().is_some() {
            conn.write(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n");
            conn.write(&ok("page"));
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(&Method::GET, &get("/"));
    assert_eq!(got.interim.len(), 1, "{}", got.raw);
    assert_eq!(got.interim[0].status(), 103);
    assert_eq!(got.interim[0].headers()["link"], "</s.css>; rel=preload");
    assert_eq!(got.interim[0].headers()["via"], "1.1 h1proto-proxy");
    assert_eq!(got.body, b"page");

    let mut old = Client::connect(proxy.addr);
    let got = old.request(&Method::GET, b"GET / HTTP/1.0\r\n\r\n");
    assert!(got.interim.is_empty());
    assert!(!got.raw.contains("103"), "{}", got.raw);
    assert_eq!(got.body, b"page");
}

#[test]
fn expect_100_continue_is_relayed_from_the_upstream() {
    let upstream = Upstream::start(|conn| {
        let Some(head) = conn.read_head() else { return };
        assert_eq!(head.headers()["expect"], "100-continue");
        conn.write(b"HTTP/1.1 100 Continue\r\nX-From: upstream\r\n\r\n");
        let (body, _) = conn.read_rest().expect("the body");
        conn.write(&ok(std::str::from_utf8(&body).unwrap()));
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::POST);
    client.send(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    let interim = client.interim().expect("100 Continue before the body");
    assert_eq!(interim.status(), 100);
    assert_eq!(interim.headers()["x-from"], "upstream");
    client.send(b"hello");
    let got = client.response().unwrap();
    assert_eq!((got.status(), &got.body[..]), (200, &b"hello"[..]));
    drop(client);
    assert!(upstream.wait_idle(), "an upstream assertion failed");
}

#[test]
fn a_refused_expectation_never_sends_the_body() {
    let upstream = Upstream::start(|conn| {
        if conn.read_head().is_some() {
            conn.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 6\r\n\r\nlog in");
            conn.wait_for_close();
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::POST,
        b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
    );
    assert_eq!((got.status(), &got.body[..]), (401, &b"log in"[..]));
    assert!(got.interim.is_empty(), "{}", got.raw);
    // The client held its body back; the connection cannot go on.
    assert_eq!(got.header("connection"), Some("close"));
    assert!(client.is_closed_by_peer());
    assert!(upstream.wait_idle());
    let received = String::from_utf8(upstream.received().remove(0)).unwrap();
    assert!(
        received.ends_with("\r\n\r\n"),
        "body bytes went up: {received:?}"
    );
}

#[test]
fn an_upstream_that_ignores_the_expectation_gets_the_body_after_a_while() {
    let upstream = Upstream::start(|conn| {
        if let Some(req) = conn.read_request() {
            conn.write(&ok(std::str::from_utf8(&req.body).unwrap()));
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::POST);
    client.send(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    // The proxy's own 100, sent when it starts reading the body.
    let interim = client.interim().expect("100 Continue");
    assert_eq!(interim.status(), 100);
    assert!(!interim.headers().contains_key("via"));
    client.send(b"hello");
    let got = client.response().unwrap();
    assert_eq!((got.status(), &got.body[..]), (200, &b"hello"[..]));
}

/// An upstream that answers 2xx before it has read the body still gets
/// all of it: the proxy keeps sending, and the client connection goes on.
#[test]
fn an_early_2xx_answer_still_gets_the_whole_body() {
    let upstream = Upstream::start(|conn| {
        let Some(_) = conn.read_head() else { return };
        conn.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nearly\r\n0\r\n\r\n");
        let (body, _) = conn.read_rest().expect("the whole body");
        assert_eq!(body, b"0123456789");
        while let Some(req) = conn.read_request() {
            conn.write(&ok(req.head.uri().path()));
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::POST);
    client.send(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234");
    // The answer's body arrives before the request body is through...
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !seen.ends_with(b"5\r\nearly\r\n") {
        use std::io::Read;
        let n = client
            .stream
            .read(&mut buf)
            .expect("the answer during the upload");
        assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    // ...and ends once it is.
    client.send(b"56789");
    let mut rest = Vec::new();
    while !rest.ends_with(b"0\r\n\r\n") {
        use std::io::Read;
        let n = client.stream.read(&mut buf).expect("the end of the answer");
        assert!(n > 0);
        rest.extend_from_slice(&buf[..n]);
    }
    assert_eq!(rest, b"0\r\n\r\n");
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.request(&Method::GET, &get("/next")).body, b"/next");
    drop(client);
    assert_eq!(
        upstream.accepted(),
        1,
        "the upstream connection was not kept"
    );
}

#[test]
fn a_close_delimited_response_reaches_the_client_chunked() {
    let upstream = Upstream::start(|conn| {
        if conn.read_request().is_some() {
            conn.write(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nuntil the end");
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(&Method::GET, &get("/"));
    assert_eq!((got.status(), &got.body[..]), (200, &b"until the end"[..]));
    assert_eq!(
        got.header("transfer-encoding"),
        Some("chunked"),
        "{}",
        got.raw
    );
    // The client connection stays; the upstream one was used up.
    let got = client.request(&Method::GET, &get("/"));
    assert_eq!(got.body, b"until the end");
    assert_eq!(upstream.accepted(), 2);
}

#[test]
fn an_http10_request_goes_up_as_http11_with_a_host() {
    let upstream = Upstream::start(|conn| {
        if let Some(req) = conn.read_request() {
            conn.write(&ok(&req.raw_head));
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(&Method::GET, b"GET /x HTTP/1.0\r\n\r\n");
    let seen = String::from_utf8(got.body).unwrap();
    assert!(seen.starts_with("GET /x HTTP/1.1\r\n"), "{seen}");
    assert!(
        seen.contains(&format!("host: {}\r\n", upstream.addr)),
        "{seen}"
    );
    assert!(seen.contains("via: 1.0 h1proto-proxy\r\n"), "{seen}");
}

#[test]
fn connect_is_refused_and_upgrade_offers_are_declined() {
    let upstream = Upstream::start(|conn| {
        while let Some(req) = conn.read_request() {
            conn.write(&ok(&req.raw_head));
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::CONNECT,
        b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    );
    assert_eq!(got.status(), 501);
    assert_eq!(proxy.proxy.pool.opened(), 0, "CONNECT reached the upstream");
    // What follows a refused CONNECT may be tunnel data: the session
    // closes the connection rather than read it as HTTP.
    assert!(client.is_closed_by_peer());
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::GET,
        b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
    );
    assert_eq!(got.status(), 200);
    let seen = String::from_utf8(got.body).unwrap().to_ascii_lowercase();
    assert!(!seen.contains("upgrade"), "{seen}");
}

#[test]
fn a_request_h1proto_refuses_never_reaches_the_upstream() {
    let upstream = answering();
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    let got = client.request(
        &Method::POST,
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n\
          0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(got.status(), 400);
    assert!(client.is_closed_by_peer());
    assert_eq!(proxy.proxy.pool.opened(), 0);
}

// ------------------------------------------------------ failing upstreams

/// The client's view of one request to an upstream running `script`.
fn through(
    script: impl Fn(&mut proxy_support::Conn) + Send + Sync + 'static,
) -> proxy_support::Got {
    let upstream = Upstream::start(script);
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    client.request(&Method::GET, &get("/"))
}

#[test]
fn bad_or_silent_upstreams_give_502() {
    let cases: [(&str, &[u8]); 6] = [
        (
            "space before colon",
            b"HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello",
        ),
        ("not HTTP", b"hello\r\n\r\n"),
        ("bare LF", b"HTTP/1.1 200 OK\nContent-Length: 0\n\n"),
        (
            "unasked switch",
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: evil\r\n\r\n",
        ),
        (
            "another coding",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        ),
        ("cut head", b"HTTP/1.1 200 OK\r\nContent-"),
    ];
    for (name, reply) in cases {
        let got = through(move |conn| {
            if conn.read_request().is_some() {
                conn.write(reply);
            }
        });
        assert_eq!(got.status(), 502, "{name}: {}", got.raw);
        assert_eq!(got.header("content-type"), Some("text/plain"), "{name}");
    }
    // Closes without a byte.
    let got = through(|conn| {
        conn.read_request();
    });
    assert_eq!(got.status(), 502, "{}", got.raw);
    let body = String::from_utf8(got.body).unwrap();
    assert!(body.contains("without a complete response"), "{body}");
}

#[test]
fn an_unreachable_upstream_gives_502_and_the_client_connection_goes_on() {
    let proxy = start_proxy(unused_addr());
    let mut client = Client::connect(proxy.addr);
    for _ in 0..2 {
        let got = client.request(&Method::GET, &get("/"));
        assert_eq!(got.status(), 502, "{}", got.raw);
        assert!(String::from_utf8_lossy(&got.body).contains("cannot connect"));
    }
}

#[test]
fn a_response_with_te_and_cl_is_read_chunked_and_its_connection_dropped() {
    let upstream = Upstream::start(|conn| {
        while conn.read_request().is_some() {
            conn.write(
                b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n\
                  2\r\nok\r\n0\r\n\r\n",
            );
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    for _ in 0..2 {
        let got = client.request(&Method::GET, &get("/"));
        assert_eq!((got.status(), &got.body[..]), (200, &b"ok"[..]));
        assert!(got.header("content-length").is_none(), "{}", got.raw);
    }
    // Never reused: one upstream connection per response.
    assert_eq!(upstream.accepted(), 2);
    assert!(upstream.wait_idle(), "the first connection was not closed");
    for conn in upstream.received() {
        assert_eq!(
            String::from_utf8(conn).unwrap().matches("GET / ").count(),
            1
        );
    }
}

#[test]
fn an_upstream_failing_inside_the_body_cuts_the_client_connection() {
    let upstream = Upstream::start(|conn| {
        if conn.read_request().is_some() {
            conn.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf");
        }
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::GET);
    client.send(&get("/"));
    // The client sees the response end short of its length.
    let err = client.response().expect_err("a complete response");
    assert!(err.contains("connection closed inside a message"), "{err}");
    assert!(
        err.contains("HTTP/1.1 200 OK") && err.ends_with("half\""),
        "{err}"
    );
}

#[test]
fn a_silent_upstream_gives_504_after_the_head_timeout() {
    let upstream = Upstream::start(|conn| {
        if conn.read_request().is_some() {
            conn.wait_for_close();
        }
    });
    let proxy = start_proxy_with(&upstream.addr.to_string(), |args| {
        args.config.timeouts.head = Some(Duration::from_millis(300));
    });
    let mut client = Client::connect(proxy.addr);
    let got = client.request(&Method::GET, &get("/"));
    assert_eq!(got.status(), 504, "{}", got.raw);
    assert!(upstream.wait_idle(), "the upstream connection was kept");
}

/// A client uploads more slowly than the upstream head timeout: the
/// upstream only answers once it has the whole body, and the response
/// head's time starts only then, so the upload is not cut with 504.
#[test]
fn a_slow_upload_is_not_a_late_response() {
    let upstream = Upstream::start(|conn| {
        while let Some(req) = conn.read_request() {
            conn.write(&ok(&req.body.len().to_string()));
        }
    });
    let proxy = start_proxy_with(&upstream.addr.to_string(), |args| {
        args.config.timeouts.head = Some(Duration::from_millis(300));
    });
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::POST);
    client.send(b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(150));
        client.send(b"5\r\nhello\r\n");
    }
    client.send(b"0\r\n\r\n");
    let got = client.response().unwrap();
    assert_eq!(
        (got.status(), &got.body[..]),
        (200, &b"30"[..]),
        "{}",
        got.raw
    );
}

/// An upstream that takes the head and then stops reading: the upload
/// stalls, and the write timeout of the upstream session ends it with 504
/// instead of leaving client and proxy waiting.
#[test]
fn an_upstream_that_stops_reading_the_body_gives_504() {
    let upstream = Upstream::start(|conn| {
        if conn.read_head().is_some() {
            std::thread::sleep(Duration::from_secs(3));
        }
    });
    let proxy = start_proxy_with(&upstream.addr.to_string(), |args| {
        args.config.timeouts.write = Some(Duration::from_millis(300));
    });
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::POST);
    // More than every socket buffer on the way can hold.
    const LEN: usize = 64 << 20;
    let mut writer = client.stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        use std::io::Write;
        let head = format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {LEN}\r\n\r\n");
        let piece = vec![b'x'; 64 << 10];
        let _ = writer.write_all(head.as_bytes());
        for _ in 0..LEN / piece.len() {
            if writer.write_all(&piece).is_err() {
                break;
            }
        }
    });
    let got = client.response().unwrap();
    assert_eq!(got.status(), 504, "{}", got.raw);
    assert!(client.is_closed_by_peer());
    sender.join().unwrap();
}

#[test]
fn a_slow_client_head_gets_408() {
    let upstream = answering();
    let proxy = start_proxy_with(&upstream.addr.to_string(), |args| {
        args.config.timeouts.head = Some(Duration::from_millis(300));
    });
    let mut client = Client::connect(proxy.addr);
    client.expect(&Method::GET);
    client.send(b"GET / HTTP/1.1\r\nHost:");
    let got = client.response().unwrap();
    assert_eq!(got.status(), 408);
    assert_eq!(proxy.proxy.pool.opened(), 0);
}

// ------------------------------------------------------------------ pool

#[test]
fn a_pooled_connection_the_upstream_closed_is_not_used() {
    let upstream = Upstream::start(|conn| {
        if conn.read_request().is_some() {
            conn.write(&ok("hi"));
        }
        // Then the upstream drops the idle connection.
    });
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.request(&Method::GET, &get("/a")).status(), 200);
    assert!(upstream.wait_idle());
    // Let the proxy's reactor see the close.
    std::thread::sleep(Duration::from_millis(50));
    // Even a request that may not be retried goes through: the closed
    // connection is noticed before anything is sent on it.
    let got = client.request(
        &Method::POST,
        b"POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi",
    );
    assert_eq!(got.status(), 200, "{}", got.raw);
    assert_eq!(upstream.accepted(), 2);
    let received = upstream.received();
    assert!(!String::from_utf8_lossy(&received[0]).contains("/b"));
}

/// Connection 1 answers one request, then takes the next and closes
/// without answering (an upstream that timed the connection out as the
/// request arrived); later connections answer everything.
fn dies_under_the_second_request() -> Upstream {
    let count = Arc::new(AtomicUsize::new(0));
    Upstream::start(move |conn| {
        let n = count.fetch_add(1, Ordering::SeqCst);
        let mut served = 0;
        while let Some(req) = conn.read_request() {
            if n == 0 && served == 1 {
                return;
            }
            served += 1;
            conn.write(&ok(req.head.uri().path()));
        }
    })
}

#[test]
fn an_idempotent_request_is_retried_once_on_a_new_connection() {
    let upstream = dies_under_the_second_request();
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.request(&Method::GET, &get("/a")).body, b"/a");
    let got = client.request(&Method::GET, &get("/b"));
    assert_eq!((got.status(), &got.body[..]), (200, &b"/b"[..]));
    assert_eq!(upstream.accepted(), 2);
    let received = upstream.received();
    assert!(String::from_utf8_lossy(&received[0]).contains("GET /b"));
    assert!(String::from_utf8_lossy(&received[1]).contains("GET /b"));
}

#[test]
fn a_request_with_a_body_is_not_retried() {
    let upstream = dies_under_the_second_request();
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.request(&Method::GET, &get("/a")).status(), 200);
    let got = client.request(
        &Method::POST,
        b"POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi",
    );
    assert_eq!(got.status(), 502, "{}", got.raw);
    assert_eq!(proxy.proxy.pool.opened(), 1, "the POST was sent twice");
    // Nor a non-idempotent one without a body.
    let upstream = dies_under_the_second_request();
    let proxy = start_proxy(upstream.addr);
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.request(&Method::GET, &get("/a")).status(), 200);
    let got = client.request(&Method::POST, b"POST /b HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(got.status(), 502, "{}", got.raw);
    assert_eq!(proxy.proxy.pool.opened(), 1);
}

#[test]
fn idle_upstream_connections_close_after_the_idle_timeout() {
    let closed_after = Arc::new(std::sync::Mutex::new(None));
    let seen = Arc::clone(&closed_after);
    let upstream = Upstream::start(move |conn| {
        if conn.read_request().is_some() {
            conn.write(&ok("hi"));
            let start = Instant::now();
            if conn.wait_for_close() {
                *seen.lock().unwrap() = Some(start.elapsed());
            }
        }
    });
    let proxy = start_proxy_with(&upstream.addr.to_string(), |args| {
        args.config.timeouts.idle = Some(Duration::from_millis(200));
    });
    let mut client = Client::connect(proxy.addr);
    assert_eq!(client.request(&Method::GET, &get("/")).status(), 200);
    assert_eq!(proxy.proxy.pool.idle(), 1);
    assert!(upstream.wait_idle(), "the idle connection was never closed");
    assert!(closed_after.lock().unwrap().is_some());
    assert_eq!(proxy.proxy.pool.idle(), 0);
}

#[test]
fn the_command_line() {
    use proxy_support::proxy::parse_args;
    let args = |line: &str| parse_args(line.split_whitespace().map(String::from));
    let parsed = args("--upstream 10.0.0.1:80").unwrap();
    assert_eq!(parsed.addr, "127.0.0.1:8000");
    assert_eq!(parsed.upstream, "10.0.0.1:80");
    assert_eq!(parsed.via, "h1proto-proxy");
    // The defaults, with the wire view and chunk extensions on.
    let mut config = h1proto::Config::default();
    config.wire_view = true;
    config.chunk_extensions = true;
    assert_eq!(parsed.config, config);
    let parsed =
        args("--addr 0.0.0.0:1 --upstream u:2 --via edge --header-timeout 2 --idle-timeout 0.5")
            .unwrap();
    assert_eq!(
        (&parsed.addr[..], &parsed.upstream[..]),
        ("0.0.0.0:1", "u:2")
    );
    assert_eq!(parsed.via, "edge");
    assert_eq!(parsed.config.timeouts.head, Some(Duration::from_secs(2)));
    assert_eq!(
        parsed.config.timeouts.idle,
        Some(Duration::from_millis(500))
    );
    let parsed = args("--upstream u:1 --max-connections 7").unwrap();
    assert_eq!(parsed.max_connections, 7);
    for bad in [
        "",
        "--addr 127.0.0.1:1",
        "--upstream",
        "--upstream u:1 --header-timeout 0",
        "--upstream u:1 --idle-timeout x",
        "--upstream u:1 --bogus 1",
        "--upstream u:1 --max-connections 0",
        "--upstream u:1 --max-connections many",
    ] {
        assert!(args(bad).is_err(), "{bad:?} was accepted");
    }
    // What cannot be a field value is refused before anything starts.
    let mut bad = proxy_support::proxy::Args::new("u:1");
    bad.via = "a\r\nb".into();
    assert!(proxy_support::proxy::Proxy::new(&bad).is_err());
}
