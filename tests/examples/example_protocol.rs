//! Every example server, run as a process, against what RFC 9110 and RFC
//! 9112 ask of an origin server and conformance suites check: `Host`
//! values that are not `uri-host [ ":" port ]`, a missing `Host` and two
//! `Host` lines get 400, valid ones are served; `200`, `404` and `400`
//! answers carry one valid `Date`, refreshed each second; an unknown
//! method gets 501, `TRACE` 405 with `Allow`; an error body does not
//! begin with `HTTP/`.

use h1proto_test_support::process as server_process;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use server_process::{Launch, Server, connect, servers};

/// Host values a server must refuse.
const INVALID_HOSTS: &[&[u8]] = &[
    b"###",
    b"exa mple.com",
    b"ex@mple",
    b"a/b",
    b"a?b",
    b"a\\b",
    b"caf\xc3\xa9.example",
];

/// Host values a server must take.
const VALID_HOSTS: &[&str] = &["example.com:80", "[::1]:80", "ex%41mple", "a-b_c~d"];

/// A response as received: status, field lines (name in lower case,
/// value) and body.
struct Answer {
    status: u16,
    fields: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn values(&self, name: &str) -> Vec<&str> {
        let fields = self.fields.iter().filter(|(n, _)| n == name);
        fields.map(|(_, v)| v.as_str()).collect()
    }

    /// The one `Date` value, checked to be an IMF-fixdate within a few
    /// seconds of this machine's clock; as seconds since the epoch.
    fn date(&self, what: &str) -> u64 {
        let dates = self.values("date");
        assert_eq!(dates.len(), 1, "{what}: one Date, got {dates:?}");
        let secs = imf_fixdate(dates[0]).unwrap_or_else(|| panic!("{what}: {}", dates[0]));
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(secs.abs_diff(now) <= 5, "{what}: {} is not now", dates[0]);
        secs
    }
}

/// Sends `request` on a new connection and reads the answer to the close.
fn exchange(addr: SocketAddr, request: &[u8]) -> Answer {
    let mut s = connect(addr).unwrap();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    // A 400 is followed by a lingering close: the server's EOF comes at
    // once, a reset is possible once it gives up.
    let _ = s.read_to_end(&mut raw);
    parse(&raw).unwrap_or_else(|| panic!("no response: {:?}", String::from_utf8_lossy(&raw)))
}

/// The first response in `raw`.
fn parse(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()?
        .strip_prefix("HTTP/1.1 ")?
        .get(..3)?
        .parse()
        .ok()?;
    let fields = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    Some(Answer {
        status,
        fields,
        body: raw[end + 4..].to_vec(),
    })
}

/// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
/// GMT`), its day name checked against its date.
fn imf_fixdate(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.len() != 29 || &text[3..5] != ", " || &text[25..] != " GMT" {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u64> {
        let digits = &text[from..to];
        digits
            .bytes()
            .all(|d| d.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| *m == &text[8..11])? as u64 + 1;
    let (day, year) = (num(5, 7)?, num(12, 16)?);
    let (h, m, s) = (num(17, 19)?, num(20, 22)?, num(23, 25)?);
    if [
        &text[7..8],
        &text[11..12],
        &text[16..17],
        &text[19..20],
        &text[22..23],
    ] != [" ", " ", " ", ":", ":"]
        || h > 23
        || m > 59
        || s > 59
    {
        return None;
    }
    let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let lengths = [
        31,
        28 + u64::from(leap(year)),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if year < 1970 || day == 0 || day > lengths[month as usize - 1] {
        return None;
    }
    let days = (1970..year).map(|y| 365 + u64::from(leap(y))).sum::<u64>()
        + lengths[..month as usize - 1].iter().sum::<u64>()
        + day
        - 1;
    let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    (names[(days % 7) as usize] == &text[..3]).then_some(days * 86_400 + h * 3600 + m * 60 + s)
}

fn request(method: &str, host: Option<&[u8]>) -> Vec<u8> {
    let mut raw = format!("{method} / HTTP/1.1\r\n").into_bytes();
    if let Some(host) = host {
        raw.extend_from_slice(b"Host: ");
        raw.extend_from_slice(host);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"Connection: close\r\n\r\n");
    raw
}

/// The `Date` of a 200, a 404 and a 400 from `addr`.
fn three_dates(name: &str, addr: SocketAddr) -> [u64; 3] {
    let ok = exchange(addr, &request("GET", Some(b"a")));
    assert_eq!(ok.status, 200, "{name}");
    let not_found = exchange(
        addr,
        b"GET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(not_found.status, 404, "{name}");
    let bad = exchange(addr, &request("GET", Some(b"###")));
    assert_eq!(bad.status, 400, "{name}");
    [
        ok.date(&format!("{name} 200")),
        not_found.date(&format!("{name} 404")),
        bad.date(&format!("{name} 400")),
    ]
}

fn check(name: &str) {
    let server = Server::start(name, &Launch::args(&[]));
    let addr = server.addr;
    for &host in INVALID_HOSTS {
        let what = format!("{name}: Host {}", host.escape_ascii());
        let answer = exchange(addr, &request("GET", Some(host)));
        assert_eq!(answer.status, 400, "{what}");
        answer.date(&what);
        assert!(!answer.body.starts_with(b"HTTP/"), "{what}");
        assert_eq!(answer.values("connection"), ["close"], "{what}");
    }
    let answer = exchange(addr, &request("GET", None));
    assert_eq!(answer.status, 400, "{name}: no Host");
    let two = b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n";
    assert_eq!(exchange(addr, two).status, 400, "{name}: two Host lines");
    for host in VALID_HOSTS {
        let answer = exchange(addr, &request("GET", Some(host.as_bytes())));
        assert_eq!(answer.status, 200, "{name}: Host {host}");
        assert_eq!(answer.body, b"Hello, World!", "{name}: Host {host}");
    }
    let answer = exchange(addr, &request("ABC", Some(b"a")));
    assert_eq!(answer.status, 501, "{name}: ABC");
    answer.date(&format!("{name} 501"));
    let answer = exchange(addr, &request("TRACE", Some(b"a")));
    assert_eq!(answer.status, 405, "{name}: TRACE");
    assert_eq!(answer.values("allow"), ["GET, HEAD, POST"], "{name}: TRACE");
    // The Date follows the clock: a second later, every answer says so.
    let before = three_dates(name, addr);
    std::thread::sleep(Duration::from_millis(1100));
    let after = three_dates(name, addr);
    for (b, a) in before.iter().zip(&after) {
        assert!(a > b, "{name}: Date {b} then {a}");
    }
    drop(server);
}

#[test]
fn example_servers_check_host_send_date_and_refuse_methods_they_do_not_serve() {
    std::thread::scope(|scope| {
        for name in servers() {
            scope.spawn(move || check(name));
        }
    });
}

#[test]
fn the_date_reader_of_this_test_reads_rfc_9110s_example() {
    assert_eq!(
        imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(784_111_777)
    );
    assert_eq!(imf_fixdate("Mon, 06 Nov 1994 08:49:37 GMT"), None);
    assert_eq!(imf_fixdate("Sun, 06 Nov 1994 08:49:37 UTC"), None);
    assert_eq!(imf_fixdate("Sunday, 06-Nov-94 08:49:37 GMT"), None);
}
