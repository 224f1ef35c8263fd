//! What the proxy changes in a head it forwards, and nothing else.
//!
//! A head is forwarded as the `Parts` the decoder produced, extensions
//! included, and edited in place: the fields the proxy must not forward
//! are removed and its own are added, so that whatever else the decoded
//! head carries (its reason phrase, and its wire view: the order and
//! spelling of its field lines and its request-target as received)
//! reaches the encoder unchanged. The encoder writes the remaining fields
//! in the received order and spelling and the proxy's own after them
//! (`h1proto::wire::FieldOrder` has the rule).

use http::header::{
    CONNECTION, CONTENT_LENGTH, EXPECT, HOST, HeaderMap, HeaderValue, TRAILER, TRANSFER_ENCODING,
    VIA,
};
use http::{StatusCode, Version, request, response};

/// How a request's body is framed, read from the fields the request
/// decoder has already checked: `Transfer-Encoding` means chunked (any
/// other final coding was refused), else `Content-Length`, else no body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestBody {
    /// No body, or `Content-Length: 0`.
    None,
    /// `Content-Length` bytes.
    Length,
    /// The chunked coding.
    Chunked,
}

impl RequestBody {
    /// The framing of a request whose fields `seen` went over: a lookup
    /// only for a `Content-Length` that is there.
    fn of(fields: &HeaderMap, seen: &Seen) -> Self {
        if seen.transfer_encoding {
            return RequestBody::Chunked;
        }
        match seen
            .content_length
            .then(|| fields.get(CONTENT_LENGTH))
            .flatten()
        {
            Some(len) if len.as_bytes().iter().any(|&b| b != b'0') => RequestBody::Length,
            _ => RequestBody::None,
        }
    }
}

/// The proxy's own fields: its `Via` entry for each version it receives.
#[derive(Debug, Clone)]
pub struct Via {
    http10: HeaderValue,
    http11: HeaderValue,
}

impl Via {
    /// `name` is the pseudonym the proxy gives itself in `Via` (RFC 9110
    /// section 7.6.3: `received-by` may be a pseudonym rather than the
    /// host and port, which a reverse proxy need not disclose).
    pub fn new(name: &str) -> Option<Self> {
        let value = |version: &str| HeaderValue::from_str(&format!("{version} {name}")).ok();
        Some(Via {
            http10: value("1.0")?,
            http11: value("1.1")?,
        })
    }

    /// The entry for a message received with `version`.
    fn entry(&self, version: Version) -> HeaderValue {
        if version == Version::HTTP_10 {
            self.http10.clone()
        } else {
            self.http11.clone()
        }
    }
}

/// Which of the fields the proxy reads a head has: one pass over its
/// names, so that a field that is not there costs no lookup.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    connection: bool,
    transfer_encoding: bool,
    content_length: bool,
    expect: bool,
    host: bool,
}

impl Seen {
    fn of(fields: &HeaderMap) -> Self {
        let mut seen = Seen::default();
        // Compared with `http`'s constants, these standard names are
        // compared by number, not by their bytes.
        for name in fields.keys() {
            seen.connection |= name == CONNECTION;
            seen.transfer_encoding |= name == TRANSFER_ENCODING;
            seen.content_length |= name == CONTENT_LENGTH;
            seen.expect |= name == EXPECT;
            seen.host |= name == HOST;
        }
        seen
    }
}

/// Edits a request head for the upstream:
///
/// - the hop-by-hop fields go (`Connection` and what it lists,
///   `Keep-Alive`, `Proxy-Connection`, `TE`, `Transfer-Encoding`,
///   `Upgrade`): the upstream connection has its own, and an `Upgrade`
///   offer is thereby declined (RFC 9110 section 7.8 lets a server ignore
///   it);
/// - `Expect: 100-continue` goes unless the client is waiting for
///   `100 Continue` (an HTTP/1.0 client, or a request without a body,
///   cannot be: RFC 9110 section 10.1.1);
/// - the proxy's `Via` entry (unless `--no-via`) is added after any the
///   request carried;
/// - a request without `Host` (HTTP/1.0 allows it) gets the upstream's;
/// - the version becomes the proxy's own, HTTP/1.1 (RFC 9110 section 2.5).
///
/// Returns how the request's body is framed, read before the edits.
pub fn to_upstream(
    head: &mut request::Parts,
    via: Option<&Via>,
    host: &HeaderValue,
    waits: bool,
) -> RequestBody {
    let fields = &mut head.headers;
    let seen = Seen::of(fields);
    let body = RequestBody::of(fields, &seen);
    h1proto::remove_hop_by_hop(fields);
    // `Connection` may have listed `Expect` or `Host`, and removed it.
    if !waits && seen.expect && is_continue_expectation(fields) {
        fields.remove(EXPECT);
    }
    if let Some(via) = via {
        fields.append(VIA, via.entry(head.version));
    }
    if !seen.host || (seen.connection && !fields.contains_key(HOST)) {
        fields.insert(HOST, host.clone());
    }
    head.version = Version::HTTP_11;
    body
}

/// Edits a response head (interim or final) for the client:
///
/// - a response with `Transfer-Encoding` loses its `Content-Length`, which
///   the decoder ignored (RFC 9112 section 6.3: a sender MUST remove it
///   before forwarding such a message);
/// - the hop-by-hop fields go, as for requests; the body is re-framed for
///   the client by the encoder;
/// - to an HTTP/1.0 client, `Trailer` goes too: its body cannot carry
///   trailers, so none are forwarded;
/// - the proxy's `Via` entry is added (unless `--no-via`), and the version
///   becomes HTTP/1.1.
///
/// Returns `false` when the response has a transfer coding other than
/// `chunked` (see [`codings_supported`]), read before the edits: it
/// cannot be forwarded faithfully.
pub fn to_client(head: &mut response::Parts, via: Option<&Via>, client: Version) -> bool {
    let fields = &mut head.headers;
    let seen = Seen::of(fields);
    let supported = !seen.transfer_encoding || codings_supported(fields);
    if seen.transfer_encoding {
        fields.remove(CONTENT_LENGTH);
    }
    h1proto::remove_hop_by_hop(fields);
    if client == Version::HTTP_10 {
        fields.remove(TRAILER);
    }
    if let Some(via) = via {
        fields.append(VIA, via.entry(head.version));
    }
    head.version = Version::HTTP_11;
    supported
}

/// `true` when every transfer coding of a response is `chunked`, the one
/// coding the proxy removes and applies again. A response with another
/// (`gzip`, say) cannot be forwarded faithfully once `Transfer-Encoding`
/// is removed as hop-by-hop, so it is refused with 502.
fn codings_supported(fields: &HeaderMap) -> bool {
    fields.get_all(TRANSFER_ENCODING).iter().all(|value| {
        value
            .as_bytes()
            .split(|&b| b == b',')
            .map(|coding| coding.trim_ascii())
            .filter(|coding| !coding.is_empty())
            .all(|coding| coding.eq_ignore_ascii_case(b"chunked"))
    })
}

/// `true` for a 1xx response after which the final one follows.
pub fn is_interim(status: StatusCode) -> bool {
    status.is_informational() && status != StatusCode::SWITCHING_PROTOCOLS
}

fn is_continue_expectation(fields: &HeaderMap) -> bool {
    fields
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}
