//! The framing decision of RFC 9112 section 6.3 and the connection verdict of
//! section 9.3, row by row, on the pure functions of `framing`, as a unit test of the crate.
#![cfg(test)]

use crate::framing::{
    FramingFields, ResponseClass, connection_verdict_of, framing_close, framing_of, response_class,
};
use crate::{
    CloseReason, ErrorKind, KeepAlive,
    framing::{BodyKind, RequestKind},
};
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{StatusCode, Version};

/// The framing of a message: its body kind, and why the framing alone
/// forbids reusing the connection, if it does.
#[derive(Debug, PartialEq, Eq)]
struct Framing {
    body: BodyKind,
    close: Option<CloseReason>,
}

/// The framing of a message with these fields, as a decoder decides it.
fn framing(
    response: Option<(RequestKind, StatusCode)>,
    version: Version,
    headers: &HeaderMap,
) -> Result<Framing, ErrorKind> {
    let seen = FramingFields::of(headers);
    let body = framing_of(response, version, &seen)?;
    let close = framing_close(body, &seen);
    Ok(Framing { body, close })
}

/// The framing of a request with these fields.
fn request_framing(version: Version, headers: &HeaderMap) -> Result<Framing, ErrorKind> {
    framing(None, version, headers)
}

/// The framing of a response with these fields.
fn response_framing(
    request: RequestKind,
    status: StatusCode,
    version: Version,
    headers: &HeaderMap,
) -> Result<Framing, ErrorKind> {
    framing(Some((request, status)), version, headers)
}

const V10: Version = Version::HTTP_10;
const V11: Version = Version::HTTP_11;

/// A header map from `(name, value)` pairs, in order, repeated names kept.
fn fields(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    map
}

fn req(version: Version, pairs: &[(&str, &str)]) -> Result<Framing, ErrorKind> {
    request_framing(version, &fields(pairs))
}

fn req_body(version: Version, pairs: &[(&str, &str)]) -> BodyKind {
    let framing = req(version, pairs).unwrap_or_else(|e| panic!("{pairs:?}: {e:?}"));
    assert_eq!(
        framing.close, None,
        "{pairs:?}: a request framing never closes"
    );
    framing.body
}

fn resp(
    request: RequestKind,
    status: u16,
    version: Version,
    pairs: &[(&str, &str)],
) -> Result<Framing, ErrorKind> {
    response_framing(
        request,
        StatusCode::from_u16(status).unwrap(),
        version,
        &fields(pairs),
    )
}

fn resp_ok(request: RequestKind, status: u16, pairs: &[(&str, &str)]) -> Framing {
    resp(request, status, V11, pairs).unwrap_or_else(|e| panic!("{status} {pairs:?}: {e:?}"))
}

// ---------------------------------------------------------------- requests

#[test]
fn request_without_framing_fields_has_an_empty_body() {
    // RFC 9112 section 6.3 item 7.
    assert_eq!(req_body(V11, &[]), BodyKind::Empty);
    assert_eq!(req_body(V10, &[]), BodyKind::Empty);
    assert_eq!(
        req_body(V11, &[("host", "a"), ("content-type", "text/plain")]),
        BodyKind::Empty
    );
}

#[test]
fn request_content_length_is_the_length() {
    for (value, n) in [
        ("0", 0),
        ("5", 5),
        ("007", 7),
        ("1234567890", 1_234_567_890),
        ("18446744073709551615", u64::MAX),
    ] {
        assert_eq!(
            req_body(V11, &[("content-length", value)]),
            BodyKind::Length(n),
            "{value}"
        );
        assert_eq!(
            req_body(V10, &[("Content-Length", value)]),
            BodyKind::Length(n),
            "{value}"
        );
    }
}

#[test]
fn request_content_length_is_digits_only() {
    for value in [
        "+5",
        "-5",
        "5 5",
        "0x10",
        "a",
        "1e3",
        "5.0",
        "",
        "18446744073709551616",
        "99999999999999999999999",
        "5,5",
        "5, 5",
        "5,",
        ",5",
        "\"5\"",
    ] {
        assert_eq!(
            req(V11, &[("content-length", value)]),
            Err(ErrorKind::InvalidContentLength),
            "{value:?}"
        );
    }
}

#[test]
fn request_with_repeated_content_length_is_refused_even_when_equal() {
    for pairs in [
        &[("content-length", "5"), ("content-length", "5")][..],
        &[("content-length", "5"), ("content-length", "6")],
        &[("content-length", "0"), ("content-length", "0")],
    ] {
        assert_eq!(
            req(V11, pairs),
            Err(ErrorKind::InvalidContentLength),
            "{pairs:?}"
        );
    }
}

#[test]
fn request_chunked_in_any_case_and_with_ows_is_chunked() {
    for value in [
        "chunked",
        "Chunked",
        "CHUNKED",
        "cHuNkEd",
        " chunked",
        "chunked ",
        "\tchunked\t",
        ", chunked",
        "chunked,",
        " , chunked , ",
    ] {
        assert_eq!(
            req_body(V11, &[("transfer-encoding", value)]),
            BodyKind::Chunked,
            "{value:?}"
        );
    }
}

#[test]
fn request_with_transfer_encoding_and_content_length_is_refused() {
    // RFC 9112 section 6.1: a server MAY reject it; h1proto does, always.
    for pairs in [
        &[("transfer-encoding", "chunked"), ("content-length", "5")][..],
        &[("content-length", "5"), ("transfer-encoding", "chunked")],
        &[("content-length", "0"), ("transfer-encoding", "chunked")],
        &[("transfer-encoding", "gzip"), ("content-length", "5")],
    ] {
        assert_eq!(
            req(V11, pairs),
            Err(ErrorKind::ContentLengthWithTransferEncoding),
            "{pairs:?}"
        );
    }
}

#[test]
fn request_with_transfer_encoding_in_http10_is_refused() {
    for pairs in [
        &[("transfer-encoding", "chunked")][..],
        &[("transfer-encoding", "chunked"), ("content-length", "5")],
        &[("transfer-encoding", "gzip")],
    ] {
        assert_eq!(
            req(V10, pairs),
            Err(ErrorKind::TransferEncodingInHttp10),
            "{pairs:?}"
        );
    }
}

#[test]
fn request_with_an_unknown_coding_before_chunked_is_not_implemented() {
    // RFC 9112 section 6.1: a coding the server does not understand -> 501.
    for pairs in [
        &[("transfer-encoding", "gzip, chunked")][..],
        &[("transfer-encoding", "x-custom, chunked")],
        &[
            ("transfer-encoding", "gzip"),
            ("transfer-encoding", "chunked"),
        ],
        &[("transfer-encoding", "deflate;q=1, chunked")],
    ] {
        let err = req(V11, pairs).unwrap_err();
        assert_eq!(err, ErrorKind::UnsupportedTransferCoding, "{pairs:?}");
        assert_eq!(err.status(), StatusCode::NOT_IMPLEMENTED);
    }
}

#[test]
fn request_whose_final_coding_is_not_chunked_is_a_bad_request() {
    // RFC 9112 section 6.3 item 4: chunked not final in a request -> 400.
    for pairs in [
        &[("transfer-encoding", "chunked, gzip")][..],
        &[("transfer-encoding", "identity")],
        &[("transfer-encoding", "gzip")],
        &[
            ("transfer-encoding", "chunked"),
            ("transfer-encoding", "gzip"),
        ],
    ] {
        let err = req(V11, pairs).unwrap_err();
        assert_eq!(err, ErrorKind::InvalidTransferEncoding, "{pairs:?}");
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
    }
}

#[test]
fn request_applying_chunked_twice_or_naming_no_coding_is_refused() {
    for pairs in [
        &[("transfer-encoding", "chunked, chunked")][..],
        &[
            ("transfer-encoding", "chunked"),
            ("transfer-encoding", "chunked"),
        ],
        &[("transfer-encoding", "Chunked, gzip, chunked")],
        &[("transfer-encoding", "")],
        &[("transfer-encoding", " , ")],
        &[("transfer-encoding", "\"chunked\"")],
        &[("transfer-encoding", "gz(ip), chunked")],
    ] {
        let err = req(V11, pairs).unwrap_err();
        assert_eq!(err, ErrorKind::InvalidTransferEncoding, "{pairs:?}");
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
    }
}

// --------------------------------------------------------------- responses

/// Fields that would frame a body if the response could have one.
const FRAMING_FIELD_SETS: &[&[(&str, &str)]] = &[
    &[],
    &[("content-length", "10")],
    &[("content-length", "not a number")],
    &[("content-length", "1"), ("content-length", "2")],
    &[("transfer-encoding", "chunked")],
    &[("transfer-encoding", "gzip")],
    &[("transfer-encoding", "chunked"), ("content-length", "3")],
];

#[test]
fn bodiless_responses_are_empty_whatever_the_fields() {
    // RFC 9112 section 6.3 items 1 and 2.
    let cases = [
        (RequestKind::Head, 200),
        (RequestKind::Head, 404),
        (RequestKind::Head, 500),
        (RequestKind::Other, 100),
        (RequestKind::Other, 103),
        (RequestKind::Other, 101),
        (RequestKind::Other, 204),
        (RequestKind::Other, 304),
        (RequestKind::Connect, 200),
        (RequestKind::Connect, 204),
        (RequestKind::Connect, 299),
    ];
    for (request, status) in cases {
        for pairs in FRAMING_FIELD_SETS {
            for version in [V10, V11] {
                let framing = resp(request, status, version, pairs)
                    .unwrap_or_else(|e| panic!("{request:?} {status} {pairs:?}: {e:?}"));
                assert_eq!(
                    framing.body,
                    BodyKind::Empty,
                    "{request:?} {status} {pairs:?}"
                );
                assert_eq!(framing.close, None, "{request:?} {status} {pairs:?}");
            }
        }
    }
}

#[test]
fn connect_answered_with_a_non_2xx_is_framed_normally() {
    let framing = resp_ok(RequestKind::Connect, 407, &[("content-length", "12")]);
    assert_eq!(framing.body, BodyKind::Length(12));
    assert_eq!(framing.close, None);
    let framing = resp_ok(
        RequestKind::Connect,
        502,
        &[("transfer-encoding", "chunked")],
    );
    assert_eq!(framing.body, BodyKind::Chunked);
}

#[test]
fn response_chunked_is_chunked() {
    for (request, status) in [(RequestKind::Other, 200), (RequestKind::Connect, 502)] {
        for value in ["chunked", "CHUNKED", " chunked ", "gzip, chunked"] {
            let framing = resp_ok(request, status, &[("transfer-encoding", value)]);
            assert_eq!(framing.body, BodyKind::Chunked, "{value:?}");
            assert_eq!(framing.close, None, "{value:?}");
        }
    }
}

#[test]
fn response_with_transfer_encoding_and_content_length_is_chunked_then_closes() {
    // RFC 9112 section 6.3 item 3: Transfer-Encoding overrides, and the
    // connection is closed after the response.
    for pairs in [
        &[("transfer-encoding", "chunked"), ("content-length", "5")][..],
        &[("content-length", "5"), ("transfer-encoding", "chunked")],
        &[("content-length", "junk"), ("transfer-encoding", "chunked")],
    ] {
        let framing = resp_ok(RequestKind::Other, 200, pairs);
        assert_eq!(framing.body, BodyKind::Chunked, "{pairs:?}");
        assert_eq!(
            framing.close,
            Some(CloseReason::FramingConflict),
            "{pairs:?}"
        );
    }
}

#[test]
fn response_whose_final_coding_is_not_chunked_is_close_delimited() {
    // RFC 9112 section 6.3 item 4 (response): read until the connection closes.
    for value in ["gzip", "chunked, gzip", "identity"] {
        let framing = resp_ok(RequestKind::Other, 200, &[("transfer-encoding", value)]);
        assert_eq!(framing.body, BodyKind::CloseDelimited, "{value:?}");
        assert_eq!(
            framing.close,
            Some(CloseReason::CloseDelimited),
            "{value:?}"
        );
    }
}

#[test]
fn response_without_framing_fields_is_close_delimited() {
    // RFC 9112 section 6.3 item 8.
    for version in [V10, V11] {
        for status in [200, 404, 500] {
            let framing = resp(RequestKind::Other, status, version, &[("server", "x")]).unwrap();
            assert_eq!(framing.body, BodyKind::CloseDelimited);
            assert_eq!(framing.close, Some(CloseReason::CloseDelimited));
        }
    }
}

#[test]
fn response_content_length_is_the_length() {
    for version in [V10, V11] {
        for (value, n) in [("0", 0), ("42", 42), ("18446744073709551615", u64::MAX)] {
            let framing = resp(
                RequestKind::Other,
                200,
                version,
                &[("content-length", value)],
            )
            .unwrap();
            assert_eq!(framing.body, BodyKind::Length(n));
            assert_eq!(framing.close, None);
        }
    }
}

#[test]
fn response_with_an_invalid_content_length_is_an_error() {
    // RFC 9112 section 6.3 item 5: an unrecoverable framing error.
    for pairs in [
        &[("content-length", "+1")][..],
        &[("content-length", "1, 1")],
        &[("content-length", "1"), ("content-length", "2")],
        &[("content-length", "18446744073709551616")],
    ] {
        assert_eq!(
            resp(RequestKind::Other, 200, V11, pairs),
            Err(ErrorKind::InvalidContentLength),
            "{pairs:?}"
        );
    }
}

#[test]
fn response_applying_chunked_twice_is_an_error() {
    assert_eq!(
        resp(
            RequestKind::Other,
            200,
            V11,
            &[("transfer-encoding", "chunked, chunked")]
        ),
        Err(ErrorKind::InvalidTransferEncoding)
    );
}

#[test]
fn http10_response_with_transfer_encoding_never_leaves_a_reusable_connection() {
    // RFC 9112 section 6.1: treat the framing as faulty and close.
    let result = resp(
        RequestKind::Other,
        200,
        V10,
        &[("transfer-encoding", "chunked")],
    );
    match result {
        Err(_) => {}
        Ok(framing) => assert!(framing.close.is_some(), "{framing:?}"),
    }
}

#[test]
fn response_classes() {
    let cases = [
        (RequestKind::Other, 100, ResponseClass::Interim),
        (RequestKind::Other, 102, ResponseClass::Interim),
        (RequestKind::Other, 103, ResponseClass::Interim),
        (RequestKind::Head, 100, ResponseClass::Interim),
        (RequestKind::Connect, 100, ResponseClass::Interim),
        (RequestKind::Other, 101, ResponseClass::Switch),
        (RequestKind::Head, 101, ResponseClass::Switch),
        (RequestKind::Connect, 200, ResponseClass::Switch),
        (RequestKind::Connect, 206, ResponseClass::Switch),
        (RequestKind::Connect, 407, ResponseClass::Final),
        (RequestKind::Connect, 302, ResponseClass::Final),
        (RequestKind::Other, 200, ResponseClass::Final),
        (RequestKind::Head, 200, ResponseClass::Final),
        (RequestKind::Other, 204, ResponseClass::Final),
        (RequestKind::Other, 304, ResponseClass::Final),
        (RequestKind::Other, 599, ResponseClass::Final),
    ];
    for (request, status, class) in cases {
        assert_eq!(
            response_class(request, StatusCode::from_u16(status).unwrap()),
            class,
            "{request:?} {status}"
        );
    }
}

#[test]
fn request_kind_of_method() {
    use http::Method;
    assert_eq!(RequestKind::of(&Method::HEAD), RequestKind::Head);
    assert_eq!(RequestKind::of(&Method::CONNECT), RequestKind::Connect);
    assert_eq!(RequestKind::of(&Method::GET), RequestKind::Other);
    // Methods are case-sensitive: `head` is an extension method.
    assert_eq!(
        RequestKind::of(&Method::from_bytes(b"head").unwrap()),
        RequestKind::Other
    );
    assert_eq!(RequestKind::default(), RequestKind::Other);
}

// ------------------------------------------------------ connection verdict

fn verdict(version: Version, pairs: &[(&str, &str)]) -> KeepAlive {
    connection_verdict_of(version, &FramingFields::of(&fields(pairs)))
}

#[test]
fn http11_persists_by_default() {
    assert_eq!(verdict(V11, &[]), KeepAlive::Reusable);
    assert_eq!(
        verdict(V11, &[("connection", "keep-alive")]),
        KeepAlive::Reusable
    );
    assert_eq!(
        verdict(V11, &[("connection", "upgrade, te")]),
        KeepAlive::Reusable
    );
}

#[test]
fn close_anywhere_in_the_connection_list_closes() {
    let close = KeepAlive::Close(CloseReason::PeerClose);
    for pairs in [
        &[("connection", "close")][..],
        &[("connection", "Close")],
        &[("connection", "CLOSE")],
        &[("connection", " close ")],
        &[("connection", "keep-alive, Close")],
        &[("connection", "te,close,upgrade")],
        &[("connection", "te ,\tclose\t, x")],
        &[("connection", "keep-alive"), ("connection", "close")],
        &[("connection", "upgrade"), ("Connection", "x, cLoSe")],
    ] {
        assert_eq!(verdict(V11, pairs), close, "1.1 {pairs:?}");
        assert_eq!(verdict(V10, pairs), close, "1.0 {pairs:?}");
    }
}

#[test]
fn tokens_that_merely_contain_close_do_not_close() {
    for pairs in [
        &[("connection", "closed, x-close")][..],
        &[("connection", "close-notify")],
        &[("connection", "\"close\"")],
        &[("connection", "clo se")],
        &[("x-connection", "close")],
    ] {
        assert_eq!(verdict(V11, pairs), KeepAlive::Reusable, "{pairs:?}");
    }
}

#[test]
fn http10_closes_unless_keep_alive() {
    assert_eq!(verdict(V10, &[]), KeepAlive::Close(CloseReason::Http10));
    assert_eq!(
        verdict(V10, &[("connection", "upgrade")]),
        KeepAlive::Close(CloseReason::Http10)
    );
    assert_eq!(
        verdict(V10, &[("connection", "keep-alives")]),
        KeepAlive::Close(CloseReason::Http10)
    );
    for pairs in [
        &[("connection", "keep-alive")][..],
        &[("connection", "Keep-Alive")],
        &[("connection", "te, KEEP-ALIVE ")],
        &[("connection", "te"), ("connection", "keep-alive")],
    ] {
        assert_eq!(verdict(V10, pairs), KeepAlive::Reusable, "{pairs:?}");
    }
}

// ------------------------------------------------------------ status hints

#[test]
fn every_error_kind_suggests_its_status() {
    use ErrorKind::*;
    let expect = [
        (InvalidMethod, 400),
        (InvalidTarget, 400),
        (InvalidStartLine, 400),
        (InvalidVersion, 400),
        (UnsupportedVersion, 505),
        (InvalidStatus, 400),
        (InvalidReason, 400),
        (InvalidFieldName, 400),
        (MissingColon, 400),
        (WhitespaceBeforeColon, 400),
        (InvalidFieldValue, 400),
        (ObsFold, 400),
        (BareLineFeed, 400),
        (InvalidHost, 400),
        (InvalidHostValue, 400),
        (InvalidContentLength, 400),
        (ContentLengthWithTransferEncoding, 400),
        (InvalidTransferEncoding, 400),
        (UnsupportedTransferCoding, 501),
        (TransferEncodingInHttp10, 400),
        (InvalidChunkSize, 400),
        (InvalidChunkExtension, 400),
        (MissingChunkCrlf, 400),
        (InvalidTrailer, 400),
        (HeadTooLarge, 431),
        (TooManyFields, 431),
        (TargetTooLong, 414),
        (ChunkLineTooLong, 413),
        (TrailersTooLarge, 431),
        (TooManyInterimResponses, 400),
        (UnexpectedEof, 400),
        (ChunkExtensionsTooLarge, 413),
        (ExcessiveChunkOverhead, 400),
        (TooManyEmptyLines, 400),
    ];
    for (kind, status) in expect {
        assert_eq!(kind.status().as_u16(), status, "{kind:?}");
        let error = crate::Error::from(kind);
        assert_eq!(error.kind(), kind);
        assert_eq!(error.status().as_u16(), status, "{kind:?}");
        assert!(!error.to_string().is_empty());
    }
}
