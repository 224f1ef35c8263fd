//! The head writer: start lines, field lines and the framing fields the
//! encoder adds itself.

use http::header::{CONTENT_LENGTH, HeaderMap, TRANSFER_ENCODING};
use http::{Method, StatusCode, Uri, Version};

use crate::error::UsageError;
use crate::framing::{self, BodyKind, RequestKind, Seen, connection_has};
use crate::segments::Segments;

use super::body::decimal;

/// The framing the caller chose with its own fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallerFraming {
    /// Neither `Content-Length` nor `Transfer-Encoding`.
    None,
    /// One valid `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding` ending in `chunked`.
    Chunked,
    /// `Transfer-Encoding` not ending in `chunked` (responses only): the
    /// body ends when the connection closes.
    Close,
}

/// Reads and checks the caller's framing fields. `http10` is set when the
/// message is HTTP/1.0 or goes to an HTTP/1.0 peer: no `Transfer-Encoding`.
pub(crate) fn caller_framing(
    headers: &HeaderMap,
    seen: &Seen,
    http10: bool,
    response: bool,
) -> Result<CallerFraming, UsageError> {
    let has_te = seen.transfer_encoding;
    let has_cl = seen.content_length.is_some();
    if !has_te && !has_cl {
        return Ok(CallerFraming::None);
    }
    if has_te && (has_cl || http10) {
        return Err(UsageError::InvalidFraming);
    }
    if has_cl {
        // Strict: one field line of 1*DIGIT, as the decoders require.
        return match framing::request_framing_of(Version::HTTP_11, seen, headers) {
            Ok(f) => match f.body {
                BodyKind::Length(n) => Ok(CallerFraming::Length(n)),
                _ => Err(UsageError::InvalidFraming),
            },
            Err(_) => Err(UsageError::InvalidFraming),
        };
    }
    // Transfer-Encoding alone. Requests: exactly `chunked` (what this
    // crate's request decoder accepts). Responses: any list of codings;
    // one not ending in `chunked` makes the body close-delimited.
    if !response {
        return match framing::request_framing_of(Version::HTTP_11, seen, headers) {
            Ok(f) if f.body == BodyKind::Chunked => Ok(CallerFraming::Chunked),
            _ => Err(UsageError::InvalidFraming),
        };
    }
    match framing::response_framing_of(
        RequestKind::Other,
        StatusCode::OK,
        Version::HTTP_11,
        seen,
        headers,
    ) {
        Ok(f) => match f.body {
            BodyKind::Chunked => Ok(CallerFraming::Chunked),
            BodyKind::CloseDelimited => Ok(CallerFraming::Close),
            _ => Err(UsageError::InvalidFraming),
        },
        Err(_) => Err(UsageError::InvalidFraming),
    }
}

/// The version written in a start line: HTTP/1.0 when the message says so,
/// HTTP/1.1 otherwise; HTTP/2 and later cannot be written.
pub(crate) fn version_bytes(version: Version) -> Result<&'static [u8], UsageError> {
    if version == Version::HTTP_10 {
        Ok(b"HTTP/1.0")
    } else if version == Version::HTTP_2 || version == Version::HTTP_3 {
        Err(UsageError::InvalidHead)
    } else {
        Ok(b"HTTP/1.1")
    }
}

/// `true` for a peer that speaks HTTP/1.0 (or older).
pub(crate) fn is_http10(version: Version) -> bool {
    version == Version::HTTP_10 || version == Version::HTTP_09
}

/// Writes `name: value\r\n`.
pub(crate) fn write_field(out: &mut Segments, name: &[u8], value: &[u8]) {
    out.push_slice(name);
    out.push_slice(b": ");
    out.push_slice(value);
    out.push_slice(b"\r\n");
}

/// The fields the encoder adds after the caller's.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Added {
    /// `content-length: n`.
    pub(crate) content_length: Option<u64>,
    /// `transfer-encoding: chunked`.
    pub(crate) chunked: bool,
    /// `connection: close`.
    pub(crate) close: bool,
    /// `connection: keep-alive`.
    pub(crate) keep_alive: bool,
    /// Leave out the caller's `Content-Length` and `Transfer-Encoding`.
    pub(crate) strip_framing: bool,
    /// Leave out the caller's `Transfer-Encoding` only.
    pub(crate) strip_te: bool,
}

/// Writes the caller's fields, the added fields and the empty line.
pub(crate) fn write_fields(
    out: &mut Segments,
    headers: &HeaderMap,
    host: Option<&[u8]>,
    added: &Added,
) {
    if let Some(host) = host {
        write_field(out, b"host", host);
    }
    for (name, value) in headers {
        if (added.strip_framing && (name == CONTENT_LENGTH || name == TRANSFER_ENCODING))
            || (added.strip_te && name == TRANSFER_ENCODING)
        {
            continue;
        }
        write_field(out, name.as_str().as_bytes(), value.as_bytes());
    }
    if let Some(n) = added.content_length {
        let mut buf = [0u8; 20];
        write_field(out, b"content-length", decimal(&mut buf, n));
    }
    if added.chunked {
        write_field(out, b"transfer-encoding", b"chunked");
    }
    if added.close {
        write_field(out, b"connection", b"close");
    }
    if added.keep_alive {
        write_field(out, b"connection", b"keep-alive");
    }
    out.push_slice(b"\r\n");
}

/// Writes `HTTP/1.1 200 OK\r\n`.
pub(crate) fn write_status_line(
    out: &mut Segments,
    version: &[u8],
    status: StatusCode,
    reason: &[u8],
) {
    out.push_slice(version);
    out.push_slice(b" ");
    out.push_slice(status.as_str().as_bytes());
    out.push_slice(b" ");
    out.push_slice(reason);
    out.push_slice(b"\r\n");
}

/// The request-target form a request is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetForm {
    /// `/path?query`.
    Origin,
    /// `http://authority/path?query`.
    Absolute,
    /// `authority` (CONNECT).
    Authority,
    /// `*` (OPTIONS).
    Asterisk,
}

/// Chooses the request-target form for a method and URI.
pub(crate) fn target_form(method: &Method, uri: &Uri) -> Result<TargetForm, UsageError> {
    if method == Method::CONNECT {
        return match uri.authority() {
            Some(_) if uri.scheme().is_none() || uri.path() == "/" || uri.path().is_empty() => {
                Ok(TargetForm::Authority)
            }
            _ => Err(UsageError::InvalidHead),
        };
    }
    match (uri.scheme(), uri.authority()) {
        (Some(_), Some(_)) => Ok(TargetForm::Absolute),
        (None, None) if uri.path() == "*" => {
            if method == Method::OPTIONS {
                Ok(TargetForm::Asterisk)
            } else {
                Err(UsageError::InvalidHead)
            }
        }
        (None, None) => Ok(TargetForm::Origin),
        _ => Err(UsageError::InvalidHead),
    }
}

/// Writes `METHOD target HTTP/1.1\r\n`.
pub(crate) fn write_request_line(
    out: &mut Segments,
    method: &Method,
    uri: &Uri,
    form: TargetForm,
    version: &[u8],
) {
    out.push_slice(method.as_str().as_bytes());
    out.push_slice(b" ");
    match form {
        TargetForm::Asterisk => out.push_slice(b"*"),
        TargetForm::Authority => {
            if let Some(a) = uri.authority() {
                out.push_slice(a.as_str().as_bytes());
            }
        }
        TargetForm::Absolute | TargetForm::Origin => {
            if form == TargetForm::Absolute {
                if let (Some(s), Some(a)) = (uri.scheme(), uri.authority()) {
                    out.push_slice(s.as_str().as_bytes());
                    out.push_slice(b"://");
                    out.push_slice(a.as_str().as_bytes());
                }
            }
            let path = uri.path();
            out.push_slice(if path.is_empty() {
                b"/"
            } else {
                path.as_bytes()
            });
            if let Some(q) = uri.query() {
                out.push_slice(b"?");
                out.push_slice(q.as_bytes());
            }
        }
    }
    out.push_slice(b" ");
    out.push_slice(version);
    out.push_slice(b"\r\n");
}

/// `true` when the caller's `Connection` field lists `close`.
pub(crate) fn says_close(headers: &HeaderMap, seen: &Seen) -> bool {
    seen.connection && connection_has(headers, b"close")
}

/// `true` when the caller's `Connection` field lists `keep-alive`.
pub(crate) fn says_keep_alive(headers: &HeaderMap, seen: &Seen) -> bool {
    seen.connection && connection_has(headers, b"keep-alive")
}
