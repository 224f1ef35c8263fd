//! The messages every head-parsing comparison uses, and the baselines run
//! beside h1proto on the same bytes. Shared by the benches (through
//! `common`) and by `examples/callgrind_probe.rs` (by path), so the
//! criterion timings and the instruction counts measure the same thing.
#![allow(dead_code)]

use http::header::{HeaderMap, HeaderName, HeaderValue};
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

/// Bare httparse: borrowed slices, no `http` types, no framing.
pub fn httparse_request(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n + req.headers.len(),
        other => panic!("{other:?}"),
    }
}

/// Bare httparse on a response head.
pub fn httparse_response(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n + resp.headers.len(),
        other => panic!("{other:?}"),
    }
}

/// The fields as a `HeaderMap`, built the usual way (each name and value
/// checked and copied).
pub fn header_map(headers: &[httparse::Header<'_>]) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(headers.len());
    for h in headers {
        map.append(
            HeaderName::from_bytes(h.name.as_bytes()).unwrap(),
            HeaderValue::from_bytes(h.value).unwrap(),
        );
    }
    map
}

/// httparse, then the `http` types a server needs before it can use the
/// request; returns the request and the length of the head.
pub fn httparse_http_request(bytes: &[u8]) -> (Request<()>, usize) {
    let mut headers = [httparse::EMPTY_HEADER; 32];
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
    *out.headers_mut() = header_map(req.headers);
    (out, len)
}

/// httparse, then the `http` types of a response.
pub fn httparse_http_response(bytes: &[u8]) -> (Response<()>, usize) {
    let mut headers = [httparse::EMPTY_HEADER; 32];
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
    *out.headers_mut() = header_map(resp.headers);
    (out, len)
}

/// The floor: one memchr pass counting line feeds.
pub fn floor(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}
