//! The client example against servers that bend RFC 9112, one deviation
//! per leniency switch: raw-socket servers on 127.0.0.1:0 send each
//! deviation; with `--lenient` the example reads the body curl reads, and
//! without it either reads it (the client default) or fails with an error
//! that names the switch and the option.

use h1proto_test_support::servers as interop_support;

use h1proto_test_support::examples::client;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use interop_support::{run_bounded, tool};

/// A server that answers every connection with `response` after reading
/// the request head, then closes.
fn raw_server(response: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut byte) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&byte[..n]),
                }
            }
            let _ = stream.write_all(response);
        }
    });
    addr
}

/// What the example prints to standard output, or the error `main` would
/// print after "client: ".
fn fetch(lenient: bool, url: &str) -> Result<Vec<u8>, String> {
    let mut args = vec![url.to_owned()];
    if lenient {
        args.insert(0, "--lenient".to_owned());
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    client::run(&args, &mut out, &mut err)
        .map(|()| out)
        .map_err(|e| e.to_string())
}

/// What curl prints for `url`, if it reads the response.
fn curl(url: &str) -> Option<Vec<u8>> {
    let out = run_bounded(
        tool("curl").args(["-sS", "--max-time", "10", url]),
        Duration::from_secs(20),
    );
    out.status.success().then_some(out.stdout)
}

/// One deviation: the response, and the switch the default client needs
/// (`None`: the client default reads it).
struct Deviant {
    what: &'static str,
    response: &'static [u8],
    switch: Option<&'static str>,
}

const DEVIANTS: &[Deviant] = &[
    Deviant {
        what: "no SP after the status code",
        response: b"HTTP/1.1 200\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
        switch: None,
    },
    Deviant {
        what: "whitespace before a colon",
        response: b"HTTP/1.1 200 OK\r\nServer : legacy\r\nContent-Length\t: 6\r\nConnection: close\r\n\r\nhello\n",
        switch: Some("space_before_colon"),
    },
    Deviant {
        what: "a field line without a colon",
        response: b"HTTP/1.1 200 OK\r\nX-Powered-By PHP/4.0\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
        switch: Some("skip_invalid_fields"),
    },
    Deviant {
        what: "a field name that is not a token",
        response: b"HTTP/1.1 200 OK\r\nX(Legacy): 1\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
        switch: Some("skip_invalid_fields"),
    },
    Deviant {
        what: "bare LF line ends in the head",
        response: b"HTTP/1.1 200 OK\nContent-Length: 6\nConnection: close\n\nhello\n",
        switch: Some("bare_lf"),
    },
    Deviant {
        what: "bare LF line ends in a chunked body",
        response: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n6\nhello\n\n0\n\n",
        switch: Some("bare_lf"),
    },
    Deviant {
        what: "all of them at once",
        response: b"HTTP/1.0 200\nServer : legacy\nnot a field\nContent-Length: 6\n\nhello\n",
        switch: Some("bare_lf"),
    },
];

#[test]
fn lenient_client_reads_every_deviation() {
    for d in DEVIANTS {
        let url = format!("http://{}/", raw_server(d.response));
        let body = fetch(true, &url).unwrap_or_else(|e| panic!("{}: {e}", d.what));
        assert_eq!(body, b"hello\n", "{}", d.what);
    }
}

#[test]
fn default_client_names_the_switch_it_needs() {
    for d in DEVIANTS {
        let url = format!("http://{}/", raw_server(d.response));
        match (fetch(false, &url), d.switch) {
            (Ok(body), None) => assert_eq!(body, b"hello\n", "{}", d.what),
            (Err(err), Some(switch)) => {
                let hint = format!("(enable `{switch}` to accept)");
                assert!(err.contains(&hint), "{}: {err}", d.what);
                assert!(err.contains("--lenient"), "{}: {err}", d.what);
                assert!(err.starts_with(&url), "{}: {err}", d.what);
            }
            (other, _) => panic!("{}: {other:?}", d.what),
        }
    }
}

/// Where curl reads a deviant response, the lenient client reads the same
/// body. (curl refuses a field line without a colon: there the lenient
/// client reads more than curl.)
#[test]
fn lenient_client_reads_what_curl_reads() {
    let mut compared = 0;
    for d in DEVIANTS {
        let url = format!("http://{}/", raw_server(d.response));
        let Some(by_curl) = curl(&url) else { continue };
        let ours = fetch(true, &url).unwrap_or_else(|e| panic!("{}: {e}", d.what));
        assert_eq!(ours, by_curl, "{}", d.what);
        compared += 1;
    }
    assert!(
        compared >= 4,
        "curl read only {compared} of the deviant responses"
    );
}

/// Deviations no switch accepts stay refused even with `--lenient`: a
/// framing conflict the switches do not touch, and a control character.
#[test]
fn lenient_client_still_refuses_what_no_switch_accepts() {
    for (what, response) in [
        (
            "two different Content-Length values",
            &b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nContent-Length: 7\r\n\r\nhello\n"[..],
        ),
        (
            "a NUL in a field value",
            b"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 6\r\n\r\nhello\n",
        ),
    ] {
        let url = format!("http://{}/", raw_server(response));
        let err = fetch(true, &url).expect_err(what);
        assert!(err.contains("protocol error"), "{what}: {err}");
        assert!(!err.contains("enable"), "{what}: {err}");
    }
}
