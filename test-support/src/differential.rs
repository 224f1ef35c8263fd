//! h1proto against httparse on one request head: the comparison and its
//! allow-list of documented differences (docs/security.md, "Differences
//! from httparse"). Shared by `tests/differential/differential.rs` (generated heads) and
//! the `differential` fuzz target (arbitrary bytes); both include this file.
#![allow(dead_code)]

use bytes::BytesMut;
use h1proto::{ErrorKind, Event, Limits, RequestDecoder};
use http::Uri;

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
pub enum Allowed {
    /// D1: h1proto requires exactly one `Host` in HTTP/1.1 (and at most one
    /// in HTTP/1.0), whose value is `uri-host [ ":" port ]`; httparse does
    /// not look at fields.
    Host,
    /// D2: h1proto decides the framing (CL/TE rules, no framing on a
    /// CONNECT request); httparse does not.
    Framing,
    /// D3: h1proto's request-target alphabet is RFC 3986 and the form must
    /// fit the method; httparse accepts any visible byte and non-ASCII.
    Target,
    /// D4: h1proto refuses a bare LF line end; httparse accepts it.
    BareLf,
    /// D5: h1proto reads `HTTP/1.2`..`HTTP/1.9` as HTTP/1.1 (RFC 9110
    /// section 2.5); httparse refuses every minor but 0 and 1.
    VersionMinor,
    /// D6: h1proto refuses a head that is still unfinished where httparse
    /// refuses it. Allowed only when h1proto refuses the same bytes once an
    /// empty line follows. Since h1proto refuses a head at the first byte
    /// that proves it invalid, no known input needs it.
    Deferred,
    /// D7: h1proto's `Limits` (128 field lines, 64 KiB head, 8 KiB target)
    /// are lower than what httparse was given (256 fields, no size bound),
    /// and h1proto skips at most 10 empty lines before a request line
    /// (`TooManyEmptyLines`) where httparse skips any number.
    Limits,
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
                // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://".
                let scheme = target.split(':').next().unwrap_or("");
                let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
                !scheme_ok
                    || !target[scheme.len()..].starts_with("://")
                    || uri.authority().is_none()
            }
        }
    }
}

/// `uri-host [ ":" port ]` of RFC 3986, not empty, the value trimmed of
/// OWS: an IP-literal (`[` IPv6address or IPvFuture `]`) or a reg-name
/// (unreserved, sub-delims, pct-encoded), then `:` and digits.
fn is_uri_host_and_port(value: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(value) else {
        return false;
    };
    let text = text.trim_matches([' ', '\t']);
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, port)) => {
                let future = inside
                    .strip_prefix(['v', 'V'])
                    .and_then(|f| f.split_once('.'));
                let ok = match future {
                    Some((v, a)) => {
                        !v.is_empty()
                            && v.chars().all(|c| c.is_ascii_hexdigit())
                            && !a.is_empty()
                            && a.chars().all(|c| {
                                c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:".contains(c)
                            })
                    }
                    None => inside.parse::<std::net::Ipv6Addr>().is_ok(),
                };
                if !ok {
                    return false;
                }
                (inside, port)
            }
            None => return false,
        },
        None => {
            let end = text.find(':').unwrap_or(text.len());
            let (host, port) = text.split_at(end);
            let pieces: Vec<&str> = host.split('%').collect();
            let reg = |s: &str| {
                s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=".contains(c))
            };
            let pct = pieces[1..].iter().all(|p| {
                p.len() >= 2
                    && p.is_char_boundary(2)
                    && p[..2].chars().all(|c| c.is_ascii_hexdigit())
            });
            if !(pct && pieces.iter().all(|p| reg(p))) {
                return false;
            }
            (host, port)
        }
    };
    !host.is_empty()
        && (port.is_empty()
            || port
                .strip_prefix(':')
                .is_some_and(|p| p.chars().all(|c| c.is_ascii_digit())))
}

fn has_bare_lf(raw: &[u8]) -> bool {
    raw.iter()
        .enumerate()
        .any(|(i, &b)| b == b'\n' && (i == 0 || raw[i - 1] != b'\r'))
}

/// The empty lines h1proto skips before a request line, at most
/// (`ErrorKind::TooManyEmptyLines` past them; docs/parsing.md).
const MAX_EMPTY_LINES: usize = 10;

/// The CRLF empty lines `raw` starts with.
fn leading_empty_lines(raw: &[u8]) -> usize {
    raw.chunks(2).take_while(|pair| *pair == b"\r\n").count()
}

/// Which rule explains h1proto refusing a head httparse accepted.
fn explain_refusal(raw: &[u8], kind: ErrorKind, hp: &Head) -> Option<Allowed> {
    use ErrorKind::*;
    let count = |name: &str| hp.fields.iter().filter(|(n, _)| n == name).count();
    match kind {
        InvalidHost if count("host") > 1 || (count("host") == 0 && hp.minor == 1) => {
            Some(Allowed::Host)
        }
        InvalidHostValue
            if hp
                .fields
                .iter()
                .any(|(n, v)| n == "host" && !is_uri_host_and_port(v)) =>
        {
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
        // A CONNECT request has no content: any framing field is refused
        // (rule CONNECT-CONTENT).
        ConnectWithContent
            if hp.method == "CONNECT"
                && count("content-length") + count("transfer-encoding") > 0 =>
        {
            Some(Allowed::Framing)
        }
        InvalidTarget | TargetTooLong if target_is_refusable(&hp.method, &hp.target) => {
            Some(Allowed::Target)
        }
        BareLineFeed | InvalidStartLine if has_bare_lf(raw) => Some(Allowed::BareLf),
        TooManyFields if hp.fields.len() > Limits::default().max_fields => Some(Allowed::Limits),
        TooManyEmptyLines if leading_empty_lines(raw) > MAX_EMPTY_LINES => Some(Allowed::Limits),
        HeadTooLarge if raw.len() > Limits::default().max_head_bytes => Some(Allowed::Limits),
        TargetTooLong if hp.target.len() > Limits::default().max_target_bytes => {
            Some(Allowed::Limits)
        }
        _ => None,
    }
}

/// Which rule explains h1proto accepting a head httparse refused.
fn explain_acceptance(raw: &[u8], ours: &Head) -> Option<Allowed> {
    // The request-line, after the empty lines both parsers skip.
    let mut raw = raw;
    while let Some(rest) = raw.strip_prefix(b"\r\n") {
        raw = rest;
    }
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
pub fn compare(raw: &[u8]) -> Result<Option<Allowed>, String> {
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
                // Once ended, h1proto accepts: only a documented leniency
                // (an HTTP/1.x minor above 1) may explain httparse's refusal.
                Parsed::Head(ours) => explain_acceptance(&ended, &ours)
                    .map(Some)
                    .ok_or_else(|| format!("h1proto waits where httparse refuses: {}", show())),
                Parsed::Partial => Err(format!("h1proto waits where httparse refuses: {}", show())),
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
