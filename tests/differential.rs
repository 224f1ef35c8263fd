//! Differential test: generated request heads, valid and near-valid, parsed
//! by h1proto and by httparse. Where the two disagree, the difference must
//! match one entry of an explicit allow-list, each entry a rule documented
//! in docs/security.md ("Differences from httparse"); any other difference
//! fails the test.
//!
//! httparse parses syntax only: it does not interpret framing or `Host`,
//! accepts bare LF line ends and a wide request-target alphabet. Every one
//! of those is an allowed difference *in one direction* (h1proto
//! stricter), checked against the bytes: an allowed rule only excuses a
//! difference when the input really has what the rule is about.

use bytes::BytesMut;
use h1proto::{ErrorKind, Event, Limits, RequestDecoder};
use http::Uri;
use proptest::prelude::*;

// ------------------------------------------------------------ the parsers

/// A parsed head, reduced to what both parsers report.
#[derive(Debug, Clone, PartialEq)]
struct Head {
    method: String,
    target: String,
    /// 0 or 1.
    minor: u8,
    fields: Vec<(String, Vec<u8>)>,
}

#[derive(Debug, Clone, PartialEq)]
enum Parsed {
    Head(Head),
    Error(String),
    Partial,
}

fn h1proto_parse(raw: &[u8]) -> (Parsed, Option<ErrorKind>) {
    let mut dec = RequestDecoder::new(Limits::default());
    let mut buf = BytesMut::from(raw);
    match dec.decode(&mut buf) {
        Ok(Some(Event::Head { head, .. })) => (
            Parsed::Head(Head {
                method: head.method().to_string(),
                target: head.uri().to_string(),
                minor: u8::from(head.version() == http::Version::HTTP_11),
                fields: head
                    .headers()
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec()))
                    .collect(),
            }),
            None,
        ),
        Ok(Some(other)) => panic!("first event is not a head: {other:?}"),
        Ok(None) => (Parsed::Partial, None),
        Err(e) => (Parsed::Error(format!("{:?}", e.kind())), Some(e.kind())),
    }
}

fn trim(v: &[u8]) -> Vec<u8> {
    let s = v
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(v.len());
    let e = v
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(s, |i| i + 1);
    v[s..e.max(s)].to_vec()
}

fn httparse_parse(raw: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; 256];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(raw) {
        Ok(httparse::Status::Complete(_)) => Parsed::Head(Head {
            method: req.method.unwrap().to_owned(),
            target: req.path.unwrap().to_owned(),
            minor: req.version.unwrap(),
            fields: req
                .headers
                .iter()
                .map(|h| (h.name.to_ascii_lowercase(), trim(h.value)))
                .collect(),
        }),
        Ok(httparse::Status::Partial) => Parsed::Partial,
        Err(e) => Parsed::Error(format!("{e:?}")),
    }
}

// ------------------------------------------------------- the allow-list

/// The documented rules by which h1proto may refuse what httparse accepts
/// (or, for `VersionMinor`, accept what httparse refuses). Each name is a
/// row of the "Differences from httparse" table in docs/security.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allowed {
    /// D1: h1proto requires exactly one `Host` in HTTP/1.1 (and at most one
    /// in HTTP/1.0); httparse does not look at fields.
    Host,
    /// D2: h1proto decides the framing (CL/TE rules); httparse does not.
    Framing,
    /// D3: h1proto's request-target alphabet is RFC 3986 and the form must
    /// fit the method; httparse accepts any visible byte and non-ASCII.
    Target,
    /// D4: h1proto refuses a bare LF line end; httparse accepts it.
    BareLf,
    /// D5: h1proto reads `HTTP/1.2`..`HTTP/1.9` as HTTP/1.1 (RFC 9110
    /// section 2.5); httparse refuses every minor but 0 and 1.
    VersionMinor,
    /// D6: h1proto checks the lines of a head once its end has arrived;
    /// httparse may refuse a malformed line earlier. Allowed only when
    /// h1proto refuses the same bytes once an empty line follows.
    Deferred,
}

fn is_rfc_target_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%:@/?[]".contains(&b)
}

/// `true` when the target is one h1proto must refuse for `method`: a byte
/// outside RFC 3986, or a form that does not fit the method.
fn target_is_refusable(method: &str, target: &str) -> bool {
    if !target.bytes().all(is_rfc_target_byte) {
        return true;
    }
    let connect = method == "CONNECT";
    match target.as_bytes().first() {
        Some(b'/') => connect || target.parse::<Uri>().is_err(),
        Some(b'*') => target != "*" || method != "OPTIONS",
        _ => {
            // absolute-form for non-CONNECT, authority-form for CONNECT;
            // anything http::Uri cannot hold or that lacks the authority
            // (or the port, or has userinfo, for CONNECT) is refused.
            let Ok(uri) = target.parse::<Uri>() else {
                return true;
            };
            if connect {
                uri.scheme().is_some()
                    || uri
                        .authority()
                        .is_none_or(|a| a.port().is_none() || a.as_str().contains('@'))
                    || uri.path_and_query().is_some_and(|p| !p.as_str().is_empty())
            } else {
                !target.contains("://") || uri.authority().is_none()
            }
        }
    }
}

fn has_bare_lf(raw: &[u8]) -> bool {
    raw.iter()
        .enumerate()
        .any(|(i, &b)| b == b'\n' && (i == 0 || raw[i - 1] != b'\r'))
}

/// Which rule explains h1proto refusing a head httparse accepted.
fn explain_refusal(raw: &[u8], kind: ErrorKind, hp: &Head) -> Option<Allowed> {
    use ErrorKind::*;
    let count = |name: &str| hp.fields.iter().filter(|(n, _)| n == name).count();
    match kind {
        InvalidHost if count("host") > 1 || (count("host") == 0 && hp.minor == 1) => {
            Some(Allowed::Host)
        }
        InvalidContentLength
        | ContentLengthWithTransferEncoding
        | InvalidTransferEncoding
        | UnsupportedTransferCoding
        | TransferEncodingInHttp10
            if count("content-length") + count("transfer-encoding") > 0 =>
        {
            Some(Allowed::Framing)
        }
        InvalidTarget | TargetTooLong if target_is_refusable(&hp.method, &hp.target) => {
            Some(Allowed::Target)
        }
        BareLineFeed | InvalidStartLine if has_bare_lf(raw) => Some(Allowed::BareLf),
        _ => None,
    }
}

/// Which rule explains h1proto accepting a head httparse refused.
fn explain_acceptance(raw: &[u8], ours: &Head) -> Option<Allowed> {
    let line_end = raw.iter().position(|&b| b == b'\r').unwrap_or(raw.len());
    let line = &raw[..line_end];
    let minor_above_1 = line.len() >= 8
        && line[line.len() - 8..line.len() - 1] == *b"HTTP/1."
        && (b'2'..=b'9').contains(&line[line.len() - 1]);
    (minor_above_1 && ours.minor == 1).then_some(Allowed::VersionMinor)
}

/// Both accepted: the heads must be the same, up to the way each reports
/// an absolute-form target (http::Uri adds the `/` of an empty path).
fn same_head(ours: &Head, theirs: &Head) -> bool {
    let target_same = ours.target == theirs.target
        || theirs
            .target
            .parse::<Uri>()
            .is_ok_and(|u| u.to_string() == ours.target);
    // A HeaderMap keeps the order of values per name, not across names.
    let by_name = |f: &[(String, Vec<u8>)]| {
        let mut f = f.to_vec();
        f.sort_by(|a, b| a.0.cmp(&b.0));
        f
    };
    ours.method == theirs.method
        && target_same
        && ours.minor == theirs.minor
        && by_name(&ours.fields) == by_name(&theirs.fields)
}

/// Compares the two parsers on one head. `Err` names an unexplained
/// difference.
fn compare(raw: &[u8]) -> Result<Option<Allowed>, String> {
    let (ours, kind) = h1proto_parse(raw);
    let theirs = httparse_parse(raw);
    let show = || {
        format!(
            "{:?}\n  h1proto:  {ours:?}\n  httparse: {theirs:?}",
            String::from_utf8_lossy(raw)
        )
    };
    match (&ours, &theirs) {
        (Parsed::Head(a), Parsed::Head(b)) => {
            if same_head(a, b) {
                Ok(None)
            } else {
                Err(format!("both accept, different heads: {}", show()))
            }
        }
        (Parsed::Error(_), Parsed::Error(_)) => Ok(None),
        // h1proto refused before the end of the head that httparse still
        // waits for (an early error is stricter, never a different framing).
        (Parsed::Error(_), Parsed::Partial) => Ok(None),
        (Parsed::Partial, Parsed::Partial) => Ok(None),
        (Parsed::Partial, Parsed::Error(_)) => {
            let ended = [raw, &b"\r\n\r\n"[..]].concat();
            match h1proto_parse(&ended).0 {
                Parsed::Error(_) => Ok(Some(Allowed::Deferred)),
                _ => Err(format!("h1proto waits where httparse refuses: {}", show())),
            }
        }
        (Parsed::Error(_), Parsed::Head(b)) => explain_refusal(raw, kind.unwrap(), b)
            .map(Some)
            .ok_or_else(|| format!("h1proto refuses, no rule says why: {}", show())),
        (Parsed::Head(a), Parsed::Error(_)) => explain_acceptance(raw, a)
            .map(Some)
            .ok_or_else(|| format!("h1proto accepts what httparse refuses: {}", show())),
        _ => Err(format!("one parser waits for more: {}", show())),
    }
}

// -------------------------------------------------------------- generator

const TCHARS: &[u8] =
    b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(vec!["GET", "POST", "PUT", "HEAD", "OPTIONS", "CONNECT", "DELETE", "PATCH"])
            .prop_map(str::to_owned),
        2 => prop::collection::vec(prop::sample::select(TCHARS.to_vec()), 1..8)
            .prop_map(|v| String::from_utf8(v).unwrap()),
        1 => prop::sample::select(vec!["G ET", "GE\u{0}T", "", "GET\t", "ĜET"]).prop_map(str::to_owned),
    ]
}

fn target() -> impl Strategy<Value = Vec<u8>> {
    let path_byte = prop_oneof![
        20 => prop::sample::select(b"abcxyz019-._~!$&'()*+,;=:@/?%".to_vec()),
        1 => prop::sample::select(b"\"<>\\^`{|}#[] \t\x7f\x80\xff\x00".to_vec()),
    ];
    prop_oneof![
        8 => prop::collection::vec(path_byte, 0..24).prop_map(|p| [b"/".to_vec(), p].concat()),
        2 => prop::sample::select(vec![
            "http://example.com/a?b", "http://example.com", "https://a:8080/x",
            "example.com:443", "*", "//double", "http:/x", "a:b", "http://u@h/",
            "HTTP://EXAMPLE.COM/", "/%zz", "/%41", "http://[::1]:80/", "/a#frag",
        ]).prop_map(|s| s.as_bytes().to_vec()),
    ]
}

fn version() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        12 => Just("HTTP/1.1"),
        3 => Just("HTTP/1.0"),
        1 => prop::sample::select(vec![
            "HTTP/1.2", "HTTP/1.9", "HTTP/2.0", "HTTP/0.9", "http/1.1", "HTTP/1.10",
            "HTTP/1", "HTTP/1.1 ", "HTTP/11", "HTTP/3.0", "HTTP/1.a",
        ]),
    ]
}

fn field_name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => prop::sample::select(vec![
            "Host", "Content-Length", "Transfer-Encoding", "Connection", "X-A", "Accept",
            "content-length", "transfer-encoding", "host", "X_Under", "Expect",
        ]).prop_map(|s| s.as_bytes().to_vec()),
        2 => prop::collection::vec(prop::sample::select(TCHARS.to_vec()), 1..10),
        1 => prop::sample::select(vec![
            "Host ", "Bad Name", "X\u{0}Y", "", "X:Y", "Ä", "X\"", " Lead",
        ]).prop_map(|s| s.chars().map(|c| c as u32 as u8).collect()),
    ]
}

fn field_value() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        30 => prop::sample::select(b"abcXYZ0159 ,;=/.-\"()".to_vec()),
        2 => Just(b'\t'),
        1 => prop::sample::select(vec![0u8, 0x01, 0x0b, 0x0c, 0x1f, 0x7f, 0x80, 0xff, b'\r']),
    ];
    prop_oneof![
        6 => prop::collection::vec(byte, 0..20),
        2 => prop::sample::select(vec![
            "5", "0", "chunked", "gzip, chunked", "chunked, identity", "+5", "5, 5", " 5 ",
            "close", "keep-alive", "100-continue", "18446744073709551616", "xchunked", "",
        ]).prop_map(|s| s.as_bytes().to_vec()),
    ]
}

fn line_end() -> impl Strategy<Value = &'static [u8]> {
    prop_oneof![
        40 => Just(&b"\r\n"[..]),
        1 => Just(&b"\n"[..]),
        1 => Just(&b"\r\r\n"[..]),
    ]
}

/// A field line: name, separator (`": "`, `" : "`, ...), value, line end.
type FieldLine = (Vec<u8>, &'static str, Vec<u8>, &'static [u8]);

#[derive(Debug, Clone)]
struct Spec {
    method: String,
    target: Vec<u8>,
    version: &'static str,
    host: usize,
    fields: Vec<FieldLine>,
    request_line_end: &'static [u8],
    final_end: &'static [u8],
    fold: Option<usize>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        method(),
        target(),
        version(),
        prop_oneof![10 => Just(1usize), 1 => Just(0usize), 1 => Just(2usize)],
        prop::collection::vec(
            (
                field_name(),
                prop_oneof![20 => Just(": "), 4 => Just(":"), 1 => Just(" : "), 1 => Just(":\t")],
                field_value(),
                line_end(),
            ),
            0..6,
        ),
        line_end(),
        line_end(),
        prop::option::weighted(0.05, 0usize..6),
    )
        .prop_map(
            |(method, target, version, host, fields, request_line_end, final_end, fold)| Spec {
                method,
                target,
                version,
                host,
                fields,
                request_line_end,
                final_end,
                fold,
            },
        )
}

fn render(s: &Spec) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(s.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(&s.target);
    out.push(b' ');
    out.extend_from_slice(s.version.as_bytes());
    out.extend_from_slice(s.request_line_end);
    for i in 0..s.host {
        out.extend_from_slice(format!("Host: h{i}.example\r\n").as_bytes());
    }
    for (i, (name, sep, value, end)) in s.fields.iter().enumerate() {
        if s.fold == Some(i) {
            out.extend_from_slice(b" folded\r\n");
        }
        out.extend_from_slice(name);
        out.extend_from_slice(sep.as_bytes());
        out.extend_from_slice(value);
        out.extend_from_slice(end);
    }
    out.extend_from_slice(s.final_end);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// Every disagreement on a generated head is one the allow-list names.
    #[test]
    fn disagreements_are_all_allowed(s in spec()) {
        let raw = render(&s);
        if let Err(msg) = compare(&raw) {
            prop_assert!(false, "{}", msg);
        }
    }
}

/// Hand-picked heads for each allow-list entry, so every rule is proven to
/// be reachable (and each still differs the way the table says).
#[test]
fn each_allowed_difference_is_real() {
    let cases: &[(&[u8], Allowed)] = &[
        (b"GET / HTTP/1.1\r\n\r\n", Allowed::Host),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            Allowed::Host,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n",
            Allowed::Framing,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n",
            Allowed::Framing,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
            Allowed::Framing,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            Allowed::Framing,
        ),
        (b"GET /a|b HTTP/1.1\r\nHost: a\r\n\r\n", Allowed::Target),
        (b"GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", Allowed::Deferred),
        (b"GET * HTTP/1.1\r\nHost: a\r\n\r\n", Allowed::Target),
        (
            b"GET example.com:80 HTTP/1.1\r\nHost: a\r\n\r\n",
            Allowed::Target,
        ),
        (b"GET / HTTP/1.1\nHost: a\r\n\r\n", Allowed::BareLf),
        (b"GET / HTTP/1.1\r\nHost: a\n\n", Allowed::BareLf),
        (b"GET / HTTP/1.2\r\nHost: a\r\n\r\n", Allowed::VersionMinor),
    ];
    for (raw, rule) in cases {
        assert_eq!(
            compare(raw),
            Ok(Some(*rule)),
            "{:?}",
            String::from_utf8_lossy(raw)
        );
    }
}

/// Heads both parsers read identically, as a baseline.
#[test]
fn valid_heads_agree() {
    for raw in [
        &b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"POST /x?y=1 HTTP/1.0\r\nContent-Length: 5\r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
        b"GET http://a.example/p HTTP/1.1\r\nHost: a.example\r\nX:  v \t\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: \x80\xff\r\nY:\r\n\r\n",
    ] {
        assert_eq!(compare(raw), Ok(None), "{:?}", String::from_utf8_lossy(raw));
    }
}
