//! Head parsing: h1proto beside httparse, httparse followed by building the
//! `http` types, and a memchr pass over the same bytes as the floor.
//!
//! `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use h1proto::{Event, Limits, RequestDecoder, ResponseDecoder};
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri, Version};

const CURL_GET: &[u8] =
    b"GET / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n";

const BROWSER_GET: &[u8] = b"GET /articles/2024/rust-http-parsing?utm_source=newsletter&page=2 HTTP/1.1\r\n\
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

const POST_JSON: &[u8] = b"POST /api/v1/orders HTTP/1.1\r\n\
Host: api.example.com\r\n\
User-Agent: python-requests/2.31.0\r\n\
Accept: application/json\r\n\
Content-Type: application/json\r\n\
Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig\r\n\
Content-Length: 48\r\n\r\n";

const RESPONSE_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\
Date: Mon, 27 May 2024 10:00:00 GMT\r\n\
Server: nginx/1.24.0\r\n\
Content-Type: application/json; charset=utf-8\r\n\
Content-Length: 1234\r\n\
Cache-Control: no-cache\r\n\
Connection: keep-alive\r\n\r\n";

fn h1proto_request(buf: BytesMut) -> Request<()> {
    let mut buf = buf;
    let mut dec = RequestDecoder::new(Limits::default());
    match dec.decode(&mut buf) {
        Ok(Some(Event::Head { head, .. })) => head,
        other => panic!("no head: {other:?}"),
    }
}

fn h1proto_response(buf: BytesMut) -> Response<()> {
    let mut buf = buf;
    let mut dec = ResponseDecoder::new(Limits::default());
    match dec.decode(&mut buf) {
        Ok(Some(Event::Head { head, .. })) => head,
        other => panic!("no head: {other:?}"),
    }
}

fn httparse_request(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n + req.headers.len(),
        other => panic!("{other:?}"),
    }
}

fn httparse_response(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n + resp.headers.len(),
        other => panic!("{other:?}"),
    }
}

fn header_map(headers: &[httparse::Header<'_>]) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(headers.len());
    for h in headers {
        map.append(
            HeaderName::from_bytes(h.name.as_bytes()).unwrap(),
            HeaderValue::from_bytes(h.value).unwrap(),
        );
    }
    map
}

fn httparse_http_request(bytes: &[u8]) -> Request<()> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    let status = req.parse(bytes).unwrap();
    assert!(status.is_complete());
    let mut out = Request::new(());
    *out.method_mut() = Method::from_bytes(req.method.unwrap().as_bytes()).unwrap();
    *out.uri_mut() = req.path.unwrap().parse::<Uri>().unwrap();
    *out.version_mut() = if req.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    *out.headers_mut() = header_map(req.headers);
    out
}

fn httparse_http_response(bytes: &[u8]) -> Response<()> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    let status = resp.parse(bytes).unwrap();
    assert!(status.is_complete());
    let mut out = Response::new(());
    *out.status_mut() = StatusCode::from_u16(resp.code.unwrap()).unwrap();
    *out.version_mut() = if resp.version == Some(1) {
        Version::HTTP_11
    } else {
        Version::HTTP_10
    };
    *out.headers_mut() = header_map(resp.headers);
    out
}

fn floor(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

fn requests(c: &mut Criterion) {
    for (name, input) in [
        ("curl_get", CURL_GET),
        ("browser_get", BROWSER_GET),
        ("post_json", POST_JSON),
    ] {
        // Every contender must agree on the input before it is timed.
        let ours = h1proto_request(BytesMut::from(input));
        let theirs = httparse_http_request(input);
        assert_eq!(ours.method(), theirs.method());
        assert_eq!(ours.uri(), theirs.uri());
        assert_eq!(ours.headers(), theirs.headers());

        let prepared = BytesMut::from(input);
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function("h1proto", |b| {
            b.iter_batched(
                || prepared.clone(),
                |buf| h1proto_request(black_box(buf)),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("httparse", |b| {
            b.iter(|| httparse_request(black_box(input)))
        });
        group.bench_function("httparse+http", |b| {
            b.iter(|| httparse_http_request(black_box(input)))
        });
        group.bench_function("memchr_floor", |b| b.iter(|| floor(black_box(input))));
        group.finish();
    }
}

fn responses(c: &mut Criterion) {
    let ours = h1proto_response(BytesMut::from(RESPONSE_HEAD));
    let theirs = httparse_http_response(RESPONSE_HEAD);
    assert_eq!(ours.status(), theirs.status());
    assert_eq!(ours.headers(), theirs.headers());

    let input = RESPONSE_HEAD;
    let prepared = BytesMut::from(input);
    let mut group = c.benchmark_group("response_head");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("h1proto", |b| {
        b.iter_batched(
            || prepared.clone(),
            |buf| h1proto_response(black_box(buf)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("httparse", |b| {
        b.iter(|| httparse_response(black_box(input)))
    });
    group.bench_function("httparse+http", |b| {
        b.iter(|| httparse_http_response(black_box(input)))
    });
    group.bench_function("memchr_floor", |b| b.iter(|| floor(black_box(input))));
    group.finish();
}

criterion_group!(benches, requests, responses);
criterion_main!(benches);
