//! The messages every head-parsing comparison uses, and the baselines run
//! beside h1proto on the same bytes: httparse alone, and httparse followed
//! by the `http` types built as hyper builds them (zero-copy), or built by
//! copying (a second, slower row). Shared by the benches and by
//! `dev/src/bin/callgrind_probe.rs`, so the
//! criterion timings and the instruction counts measure the same thing.
#![allow(dead_code)]

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use http::header::{
    CONNECTION, CONTENT_LENGTH, HeaderMap, HeaderName, HeaderValue, TRANSFER_ENCODING,
};
use http::{Method, Request, Response, StatusCode, Uri, Version};

/// What curl 8 sends for `curl http://localhost:8080/` (3 fields).
pub const CURL_GET: &[u8] =
    b"GET / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n";

/// A navigation by a current Chromium (13 fields).
pub const BROWSER_GET: &[u8] = b"GET /articles/2024/rust-http-parsing?utm_source=newsletter&page=2 HTTP/1.1\r\n\
Host: www.example.com\r\n\
Connection: keep-alive\r\n\
Cache-Control: max-age=0\r\n\
sec-ch-ua: \"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\n\
sec-ch-ua-mobile: ?0\r\n\
sec-ch-ua-platform: \"Linux\"\r\n\
Upgrade-Insecure-Requests: 1\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8\r\n\
Sec-Fetch-Site: same-origin\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Accept-Language: en-GB,en;q=0.9,fr;q=0.8\r\n\
Cookie: session=3f9a1c2e7b4d4e0f9a8b7c6d5e4f3a2b; theme=dark; _ga=GA1.2.1234567890.1700000000\r\n\r\n";

/// The request of picohttpparser's `bench.c`, the one httparse and most
/// parser comparisons since quote (703 bytes, 9 fields).
pub const PICO_703: &[u8] = b"GET /wp-content/uploads/2010/03/hello-kitty-darth-vader-pink.jpg HTTP/1.1\r\n\
Host: www.kittyhell.com\r\n\
User-Agent: Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10.6; ja-JP-mac; rv:1.9.2.3) Gecko/20100401 Firefox/3.6.3 Pathtraq/0.9\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
Accept-Language: ja,en-us;q=0.7,en;q=0.3\r\n\
Accept-Encoding: gzip,deflate\r\n\
Accept-Charset: Shift_JIS,utf-8;q=0.7,*;q=0.7\r\n\
Keep-Alive: 115\r\n\
Connection: keep-alive\r\n\
Cookie: wp_ozh_wsa_visits=2; wp_ozh_wsa_visit_lasttime=xxxxxxxxxx; \
__utma=xxxxxxxxx.xxxxxxxxxx.xxxxxxxxxx.xxxxxxxxxx.xxxxxxxxxx.x; \
__utmz=xxxxxxxxx.xxxxxxxxxx.x.x.utmccn=(referral)|utmcsr=reader.livedoor.com|utmcct=/reader/|utmcmd=referral\r\n\r\n";

/// The head of a JSON API call (6 fields); its body is [`POST_JSON_BODY`].
pub const POST_JSON: &[u8] = b"POST /api/v1/orders HTTP/1.1\r\n\
Host: api.example.com\r\n\
User-Agent: python-requests/2.31.0\r\n\
Accept: application/json\r\n\
Content-Type: application/json\r\n\
Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig\r\n\
Content-Length: 48\r\n\r\n";

/// The 48 body bytes [`POST_JSON`] announces.
pub const POST_JSON_BODY: &[u8] = b"{\"item\":\"book-4711\",\"quantity\":12,\"gift\":false}\n";

/// An nginx response head (6 fields).
pub const RESPONSE_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
Date: Mon, 27 May 2024 10:00:00 GMT\r\n\
Server: nginx/1.24.0\r\n\
Content-Type: application/json; charset=utf-8\r\n\
Content-Length: 1234\r\n\
Cache-Control: no-cache\r\n\
Connection: keep-alive\r\n\r\n";

/// A CDN response head: chunked, with caching and security fields
/// (10 fields).
pub const RESPONSE_CDN: &[u8] = b"HTTP/1.1 200 OK\r\n\
Content-Type: text/html; charset=UTF-8\r\n\
Transfer-Encoding: chunked\r\n\
Connection: keep-alive\r\n\
Vary: Accept-Encoding\r\n\
Cache-Control: public, max-age=300\r\n\
ETag: W/\"5f3c-18f2b1a7c40\"\r\n\
Age: 42\r\n\
X-Cache: HIT\r\n\
Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n\
X-Content-Type-Options: nosniff\r\n\r\n";

/// One message of the mix.
#[derive(Clone, Copy)]
pub struct Message {
    /// Short name used for bench ids and probe arguments.
    pub name: &'static str,
    /// The head.
    pub head: &'static [u8],
    /// `true` for a request, `false` for a response.
    pub request: bool,
}

/// The six heads of the mix, requests first.
pub const MIX: [Message; 6] = [
    Message {
        name: "curl_get",
        head: CURL_GET,
        request: true,
    },
    Message {
        name: "browser_get",
        head: BROWSER_GET,
        request: true,
    },
    Message {
        name: "pico_703",
        head: PICO_703,
        request: true,
    },
    Message {
        name: "post_json",
        head: POST_JSON,
        request: true,
    },
    Message {
        name: "response_nginx",
        head: RESPONSE_HEAD,
        request: false,
    },
    Message {
        name: "response_cdn",
        head: RESPONSE_CDN,
        request: false,
    },
];

/// httparse alone: borrowed slices, no `http` types, no framing.
pub fn httparse_request(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n + req.headers.len(),
        other => panic!("{other:?}"),
    }
}

/// httparse alone on a response head.
pub fn httparse_response(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n + resp.headers.len(),
        other => panic!("{other:?}"),
    }
}

/// What a server built on httparse reads from the framing fields while
/// it builds the head, as hyper does: the body's length, whether it is
/// chunked, and what `Connection` says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Framing {
    /// `Content-Length`, parsed.
    pub content_length: Option<u64>,
    /// The last transfer coding is `chunked`.
    pub chunked: bool,
    /// The connection persists after this message.
    pub keep_alive: bool,
}

/// The most fields the baselines parse (httparse needs a fixed array).
const MAX_FIELDS: usize = 32;

/// Where one field line of a head lies, as offsets from the head's start
/// (name start and end, value start and end): httparse borrows the buffer,
/// so the offsets are kept and the values are sliced out once the head has
/// been split off and frozen (what hyper keeps in its `HeaderIndices`).
/// `u32`, so that the array the offsets go in costs little to initialise.
type FieldAt = [u32; 4];

fn range_in(base: &[u8], part: &[u8]) -> (usize, usize) {
    let start = part.as_ptr() as usize - base.as_ptr() as usize;
    (start, start + part.len())
}

fn field_offsets(base: &[u8], fields: &[httparse::Header<'_>], at: &mut [FieldAt]) -> usize {
    assert!(u32::try_from(base.len()).is_ok());
    for (slot, h) in at.iter_mut().zip(fields) {
        let (name, value) = (range_in(base, h.name.as_bytes()), range_in(base, h.value));
        *slot = [name.0, name.1, value.0, value.1].map(|n| n as u32);
    }
    fields.len()
}

/// `1*DIGIT`, without overflow.
fn digits(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })
}

/// `true` when a comma-separated field value lists `token`.
fn lists(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// The field map of a head split off and frozen, built the way hyper
/// builds it: each value and name checked once, the values slices of
/// `head` (`HeaderValue::from_maybe_shared(head.slice(value))`, no
/// copy), the map sized up front, and the framing fields read on the way.
/// (hyper itself uses `from_maybe_shared_unchecked`, which skips the value
/// check and is `unsafe`: out of reach under `forbid(unsafe_code)`.)
fn zero_copy_fields(head: &Bytes, at: &[FieldAt], version: Version) -> (HeaderMap, Framing) {
    let mut map = HeaderMap::with_capacity(at.len());
    let mut framing = Framing {
        keep_alive: version == Version::HTTP_11,
        ..Framing::default()
    };
    for f in at {
        let [name_start, name_end, start, end] = f.map(|n| n as usize);
        let name = HeaderName::from_bytes(&head[name_start..name_end]).unwrap();
        let value = HeaderValue::from_maybe_shared(head.slice(start..end)).unwrap();
        let bytes = value.as_bytes();
        if name == CONTENT_LENGTH {
            let n = digits(bytes).expect("a valid Content-Length");
            assert!(framing.content_length.is_none_or(|m| m == n));
            framing.content_length = Some(n);
        } else if name == TRANSFER_ENCODING {
            framing.chunked = bytes
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|c| c.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if name == CONNECTION {
            framing.keep_alive = if framing.keep_alive {
                !lists(bytes, b"close")
            } else {
                lists(bytes, b"keep-alive")
            };
        }
        map.append(name, value);
    }
    (map, framing)
}

/// httparse, then the `http` types a server needs before it can use the
/// request, built as hyper builds them: `parse_with_uninit_headers`, the
/// head split off `buf` and frozen, the target
/// (`Uri::from_maybe_shared(head.slice_ref(path))`) and every field value
/// slices of it, the framing fields read while building. The body, if
/// any, stays in `buf`.
pub fn zero_copy_request(buf: &mut BytesMut) -> (Request<()>, Framing) {
    let mut fields = [MaybeUninit::<httparse::Header<'_>>::uninit(); MAX_FIELDS];
    let mut req = httparse::Request::new(&mut []);
    let httparse::Status::Complete(len) = req.parse_with_uninit_headers(buf, &mut fields).unwrap()
    else {
        panic!("partial head")
    };
    let method = Method::from_bytes(req.method.unwrap().as_bytes()).unwrap();
    let path = range_in(buf, req.path.unwrap().as_bytes());
    let version = if req.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    let mut at = [FieldAt::default(); MAX_FIELDS];
    let n = field_offsets(buf, req.headers, &mut at);
    let head = buf.split_to(len).freeze();
    let uri = Uri::from_maybe_shared(head.slice_ref(&head[path.0..path.1])).unwrap();
    let (headers, framing) = zero_copy_fields(&head, &at[..n], version);
    let mut out = Request::new(());
    *out.method_mut() = method;
    *out.uri_mut() = uri;
    *out.version_mut() = version;
    *out.headers_mut() = headers;
    (out, framing)
}

/// The same for a response head (hyper's client side: the status code and
/// version, a reason phrase other than the canonical one kept, the fields
/// as above). The body, if any, stays in `buf`.
pub fn zero_copy_response(buf: &mut BytesMut) -> (Response<()>, Framing) {
    let mut fields = [MaybeUninit::<httparse::Header<'_>>::uninit(); MAX_FIELDS];
    let mut res = httparse::Response::new(&mut []);
    let httparse::Status::Complete(len) = httparse::ParserConfig::default()
        .parse_response_with_uninit_headers(&mut res, buf, &mut fields)
        .unwrap()
    else {
        panic!("partial head")
    };
    let status = StatusCode::from_u16(res.code.unwrap()).unwrap();
    let version = if res.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    let reason = res.reason.unwrap_or("");
    let canonical = status.canonical_reason() == Some(reason);
    let reason = range_in(buf, reason.as_bytes());
    let mut at = [FieldAt::default(); MAX_FIELDS];
    let n = field_offsets(buf, res.headers, &mut at);
    let head = buf.split_to(len).freeze();
    let (headers, framing) = zero_copy_fields(&head, &at[..n], version);
    let mut out = Response::new(());
    *out.status_mut() = status;
    *out.version_mut() = version;
    *out.headers_mut() = headers;
    if !canonical {
        out.extensions_mut().insert(head.slice(reason.0..reason.1));
    }
    (out, framing)
}

/// The fields as a `HeaderMap`, built by copying: each name and value
/// checked and copied into an allocation of its own.
pub fn copying_header_map(headers: &[httparse::Header<'_>]) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(headers.len());
    for h in headers {
        map.append(
            HeaderName::from_bytes(h.name.as_bytes()).unwrap(),
            HeaderValue::from_bytes(h.value).unwrap(),
        );
    }
    map
}

/// httparse, then the `http` types built by copying: the target parsed
/// from a `&str` and every value copied (`HeaderValue::from_bytes`), no
/// framing read. Slower than [`zero_copy_request`], which is how a real
/// server builds them; kept as a second row. Returns the request and the
/// length of the head.
pub fn copying_request(bytes: &[u8]) -> (Request<()>, usize) {
    let mut headers = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut req = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(len) = req.parse(bytes).unwrap() else {
        panic!("partial head")
    };
    let mut out = Request::new(());
    *out.method_mut() = Method::from_bytes(req.method.unwrap().as_bytes()).unwrap();
    *out.uri_mut() = req.path.unwrap().parse::<Uri>().unwrap();
    *out.version_mut() = if req.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    *out.headers_mut() = copying_header_map(req.headers);
    (out, len)
}

/// The copying construction for a response head.
pub fn copying_response(bytes: &[u8]) -> (Response<()>, usize) {
    let mut headers = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut resp = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(len) = resp.parse(bytes).unwrap() else {
        panic!("partial head")
    };
    let mut out = Response::new(());
    *out.status_mut() = StatusCode::from_u16(resp.code.unwrap()).unwrap();
    *out.version_mut() = if resp.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    *out.headers_mut() = copying_header_map(resp.headers);
    (out, len)
}

/// The floor: one memchr pass counting line feeds.
pub fn floor(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}
