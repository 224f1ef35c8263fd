//! The body-length decision of RFC 9112 section 6.3, as pure functions.
//!
//! Both decoders call these functions on a parsed head, and both encoders
//! take the same rules from here (which responses have no body, what a
//! sender's own `Content-Length` and `Transfer-Encoding` may say): nothing
//! else in the crate decides how long a message body is.
//! `docs/framing.md` has the table, `docs/encoding.md` the sender's side.

use http::header::{CONNECTION, HeaderMap};
use http::{Method, StatusCode, Version};

use crate::error::ErrorKind;
use crate::grammar::{is_host, is_token, list_elements, names_match, parse_decimal, trim_ows};
use crate::keep_alive::{CloseReason, KeepAlive};

/// How the body of a message is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyKind {
    /// No body at all (a request without framing fields, a response to HEAD,
    /// 1xx, 204, 304, a 2xx answer to CONNECT).
    Empty,
    /// Exactly this many bytes (`Content-Length`).
    Length(u64),
    /// The chunked transfer coding.
    Chunked,
    /// Everything until the peer closes the connection (responses only).
    CloseDelimited,
}

impl BodyKind {
    /// `true` when the message has no body bytes (`Empty` or `Length(0)`).
    pub fn is_empty(self) -> bool {
        matches!(self, BodyKind::Empty | BodyKind::Length(0))
    }
}

/// What the request a response answers tells about the response's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RequestKind {
    /// Any method other than HEAD and CONNECT.
    #[default]
    Other,
    /// HEAD: the response never has a body.
    Head,
    /// CONNECT: a 2xx response switches the connection to a tunnel.
    Connect,
}

impl RequestKind {
    /// The kind of a request method.
    #[inline]
    pub fn of(method: &Method) -> Self {
        match method.as_str() {
            "HEAD" => RequestKind::Head,
            "CONNECT" => RequestKind::Connect,
            _ => RequestKind::Other,
        }
    }
}

/// What a response does to the exchange, besides its body framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResponseClass {
    /// 1xx other than 101: an interim response; the final one follows.
    Interim,
    /// 101 Switching Protocols, or 2xx to CONNECT: HTTP ends after the head.
    Switch,
    /// A final response.
    Final,
}

/// Classifies a response status for the request it answers.
pub(crate) fn response_class(request: RequestKind, status: StatusCode) -> ResponseClass {
    match status {
        StatusCode::SWITCHING_PROTOCOLS => ResponseClass::Switch,
        _ if request == RequestKind::Connect && status.is_success() => ResponseClass::Switch,
        _ if status.is_informational() => ResponseClass::Interim,
        _ => ResponseClass::Final,
    }
}

/// The framing of a message received (RFC 9112 section 6.3): of a
/// request (items 3 to 7) when `response` is `None`, else of a response
/// with this status to a request of this kind (items 1 to 5 and 8); from
/// the framing fields gathered in `seen`.
#[inline]
pub(crate) fn framing_of(
    response: Option<(RequestKind, StatusCode)>,
    version: Version,
    seen: &FramingFields,
) -> Result<BodyKind, ErrorKind> {
    let bodiless =
        |(request, status)| no_body(response_class(request, status), request, status).is_some();
    if response.is_some_and(bodiless) {
        return Ok(BodyKind::Empty);
    }
    if seen.transfer_encoding && version == Version::HTTP_10 {
        return Err(ErrorKind::TransferEncodingInHttp10);
    }
    // In a response, `Transfer-Encoding` overrides `Content-Length` (its
    // codings alone decide), and the connection closes after it; a request
    // with both is refused.
    let conflict = response.is_some() && seen.transfer_encoding && seen.content_length.is_some();
    let declared = if conflict {
        codings(true, seen)?
    } else {
        declared_framing(response.is_some(), seen)?
    };
    Ok(match declared {
        Declared::None if response.is_none() => BodyKind::Empty,
        Declared::Length(n) => BodyKind::Length(n),
        // Other codings (responses only) stay in the body for the
        // application to remove.
        Declared::Chunked | Declared::CodedChunked => BodyKind::Chunked,
        Declared::None | Declared::Close => BodyKind::CloseDelimited,
    })
}

/// Why a message's framing alone forbids reusing the connection, if it
/// does: a close-delimited body, or a chunked one whose `Content-Length`
/// `Transfer-Encoding` overrode (RFC 9112 sections 6.1 and 6.3).
pub(crate) fn framing_close(body: BodyKind, seen: &FramingFields) -> Option<CloseReason> {
    match body {
        BodyKind::CloseDelimited => Some(CloseReason::CloseDelimited),
        BodyKind::Chunked if seen.content_length.is_some() => Some(CloseReason::FramingConflict),
        _ => None,
    }
}

/// The framing fields a sender writes on a response without a body (RFC
/// 9112 section 6.3 items 1 and 2), by why it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SenderFields {
    /// Neither `Content-Length` nor `Transfer-Encoding`: a 1xx, a 204, or
    /// a 2xx answer to CONNECT, whose connection becomes a tunnel (RFC
    /// 9110 sections 8.6, 9.3.6 and 15.2, RFC 9112 section 6.1 forbid
    /// both).
    None,
    /// `Content-Length` only: a 304 Not Modified, whose fields describe the
    /// selected representation, may carry its length, and is never sent
    /// chunked.
    LengthOnly,
    /// The fields a GET would get, `Content-Length` or `Transfer-Encoding`:
    /// any other response to HEAD.
    AsForGet,
}

/// Whether a response with `status` to a request of kind `request` has no
/// body, and which framing fields its sender keeps then: the one place
/// both decoders (which frame it as [`BodyKind::Empty`]) and the response
/// encoder (which sends its head only) take this rule from. A status that
/// makes a response body-less wins over HEAD (a 204 to HEAD is framed as a
/// 204). `class` is the response's [`response_class`].
pub(crate) fn no_body(
    class: ResponseClass,
    request: RequestKind,
    status: StatusCode,
) -> Option<SenderFields> {
    match status {
        // 1xx, a switch (a 2xx to CONNECT included) and 204.
        _ if class != ResponseClass::Final => Some(SenderFields::None),
        StatusCode::NO_CONTENT => Some(SenderFields::None),
        StatusCode::NOT_MODIFIED => Some(SenderFields::LengthOnly),
        _ if request == RequestKind::Head => Some(SenderFields::AsForGet),
        _ => None,
    }
}

/// The framing a message's own `Content-Length` and `Transfer-Encoding`
/// fields ask for, checked by the rules the decoders apply to what they
/// receive, plus the sender's own (RFC 9112 section 6.2: never both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    /// Neither field.
    None,
    /// One valid `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked`, exactly.
    Chunked,
    /// Other transfer codings, then `chunked` (responses only): the body
    /// is chunked, and the other codings are the caller's to apply.
    CodedChunked,
    /// A transfer coding list not ending in `chunked` (responses only):
    /// the body ends when the connection closes.
    Close,
}

/// Reads and checks the framing fields of a message, to be sent or
/// received ([`framing_of`] is this and the version's rule).
/// `response` selects the rules for responses, which may carry transfer
/// codings besides `chunked` ([`codings`]).
///
/// # Errors
///
/// A `Content-Length` that is not one field line of 1*DIGIT, an invalid
/// coding list, and both fields together. Whether the version allows
/// `Transfer-Encoding` is the caller's check.
#[inline]
pub(crate) fn declared_framing(
    response: bool,
    seen: &FramingFields,
) -> Result<Declared, ErrorKind> {
    match (seen.transfer_encoding, seen.content_length) {
        (false, None) => Ok(Declared::None),
        (false, Some(Some(n))) => Ok(Declared::Length(n)),
        // Strict: exactly one field line whose value is 1*DIGIT without
        // sign, and no overflow. A repeated field or a list, even of equal
        // values, is refused (RFC 9110 section 8.6 lets a recipient reject
        // them).
        (false, Some(None)) => Err(ErrorKind::InvalidContentLength),
        (true, Some(_)) => Err(ErrorKind::ContentLengthWithTransferEncoding),
        (true, None) => codings(response, seen),
    }
}

/// The framing the transfer-coding list of all `Transfer-Encoding` lines
/// asks for, as [`FramingFields`] noted it. `chunked` twice, an empty
/// list or a coding that is not a token is an error whatever the role;
/// for requests, so is any coding but one `chunked`.
#[inline(never)]
pub(crate) fn codings(response: bool, seen: &FramingFields) -> Result<Declared, ErrorKind> {
    match (seen.last_chunked, seen.other_codings) {
        _ if seen.bad_coding => Err(ErrorKind::InvalidTransferEncoding),
        (true, false) => Ok(Declared::Chunked),
        (true, true) if response => Ok(Declared::CodedChunked),
        (false, true) if response => Ok(Declared::Close),
        // "gzip, chunked": framed, but a coding this crate cannot remove.
        (true, true) => Err(ErrorKind::UnsupportedTransferCoding),
        // Not chunked last, or an empty list naming no coding at all.
        (false, _) => Err(ErrorKind::InvalidTransferEncoding),
    }
}

/// What the framing and the keep-alive verdict depend on, gathered in one
/// pass: by the head reader while it reads the field lines, or by [`FramingFields::of`]
/// from a map.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FramingFields {
    /// `Host` field lines.
    pub(crate) hosts: usize,
    /// A `Host` line whose value is not `uri-host [ ":" port ]`.
    pub(crate) bad_host: bool,
    /// A `Date` field: noted by [`FramingFields::of`] only (the encoders
    /// add one unless the caller gave it), not by the head reader.
    pub(crate) date: bool,
    /// `None` without `Content-Length`; `Some(Some(n))` for exactly one
    /// field line of 1*DIGIT; `Some(None)` for anything else (repeated,
    /// empty, not a number, a list).
    pub(crate) content_length: Option<Option<u64>>,
    /// A `Transfer-Encoding` field line.
    pub(crate) transfer_encoding: bool,
    /// Of the codings its lines list, in order: `chunked` among them, the
    /// last one `chunked`, one other than `chunked`, and one refused
    /// (`chunked` applied twice, a name that is not a token).
    chunked: bool,
    last_chunked: bool,
    other_codings: bool,
    bad_coding: bool,
    /// A `Connection` field line.
    pub(crate) connection: bool,
    /// The `Connection` lines list `close`, and `keep-alive` (an
    /// obs-folded line read as joined).
    pub(crate) connection_close: bool,
    pub(crate) connection_keep_alive: bool,
}

impl FramingFields {
    /// Gathers from a map, in one pass over its entries (no lookups: the
    /// maps an application builds are small).
    pub(crate) fn of(headers: &HeaderMap) -> FramingFields {
        let mut seen = FramingFields::default();
        for (name, value) in headers {
            seen.note_named(name.as_str().as_bytes(), value.as_bytes());
        }
        seen
    }

    /// Notes a field line of a map: `name` as `http` holds it, in lower
    /// case.
    #[inline]
    pub(crate) fn note_named(&mut self, name: &[u8], value: &[u8]) {
        self.date |= name == b"date";
        self.note(FieldRole::of_name(name), value);
    }

    /// Notes a field line of the given role, with its value.
    #[inline]
    pub(crate) fn note(&mut self, role: FieldRole, value: &[u8]) {
        match role {
            FieldRole::Other => {}
            FieldRole::Host => {
                self.hosts += 1;
                self.bad_host |= !is_host(value);
            }
            FieldRole::ContentLength => {
                self.content_length = Some(match self.content_length {
                    None => parse_decimal(trim_ows(value)),
                    // Strict: one field line only, even with equal values.
                    Some(_) => None,
                });
            }
            FieldRole::TransferEncoding => self.transfer_encoding_line(value),
            FieldRole::Connection => self.connection_line(value),
        }
    }

    /// Notes a `Transfer-Encoding` field line with this value: its
    /// codings, after those of the lines before it.
    #[inline(never)]
    fn transfer_encoding_line(&mut self, value: &[u8]) {
        self.transfer_encoding = true;
        if names_match(value, b"chunked") {
            // The usual line: one coding, and no list to read.
            return self.coding(true, true);
        }
        for coding in list_elements(value) {
            // A coding is a token, optionally with parameters.
            let name = coding.split(|&b| b == b';').next().unwrap_or(coding);
            self.coding(
                coding.eq_ignore_ascii_case(b"chunked"),
                is_token(trim_ows(name)),
            );
        }
    }

    /// Notes the next transfer coding: `chunked` or another, its name
    /// `valid` or not. `chunked` is applied at most once (RFC 9112
    /// section 7).
    fn coding(&mut self, chunked: bool, valid: bool) {
        self.bad_coding |= (chunked && self.chunked) || !valid;
        self.chunked |= chunked;
        self.last_chunked = chunked;
        self.other_codings |= !chunked;
    }

    /// Notes a `Connection` field line with this value: its tokens, so
    /// that the verdict needs no lookup in the map.
    #[inline(never)]
    fn connection_line(&mut self, value: &[u8]) {
        self.connection = true;
        for token in list_elements(value) {
            self.connection_close |= names_match(token, b"close");
            self.connection_keep_alive |= names_match(token, b"keep-alive");
        }
    }
}

/// The keep-alive verdict a message's version and `Connection` field give
/// (RFC 9112 section 9.3), before its framing is considered: from the
/// fields gathered in `seen` (by the head reader, or by
/// [`FramingFields::of`] from a map).
pub(crate) fn connection_verdict_of(version: Version, seen: &FramingFields) -> KeepAlive {
    if seen.connection_close {
        KeepAlive::Close(CloseReason::PeerClose)
    } else if seen.connection_keep_alive || version != Version::HTTP_10 {
        // Without either token, HTTP/1.1 connections persist, HTTP/1.0
        // ones close.
        KeepAlive::Reusable
    } else {
        KeepAlive::Close(CloseReason::Http10)
    }
}

/// `true` when a `Connection` field lists `token` (case-insensitive).
pub(crate) fn connection_has(headers: &HeaderMap, token: &[u8]) -> bool {
    headers
        .get_all(CONNECTION)
        .iter()
        .any(|v| list_elements(v.as_bytes()).any(|t| t.eq_ignore_ascii_case(token)))
}

/// What a field name means to the framing rules: decided once per name
/// the name cache keeps, and read by [`FramingFields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldRole {
    /// Nothing the framing rules act on.
    Other,
    /// `Host`.
    Host,
    /// `Content-Length`.
    ContentLength,
    /// `Transfer-Encoding`.
    TransferEncoding,
    /// `Connection`.
    Connection,
}

impl FieldRole {
    /// The role of a field name, in any case: the one classification of
    /// names, for the reader (bytes as received) and the encoders (a
    /// `HeaderName`).
    #[inline]
    pub(crate) fn of_name(name: &[u8]) -> FieldRole {
        // Compared a word at a time, where a byte at a time costs as much
        // again as the rest of noting a field.
        let is = |known: &[u8]| names_match(name, known);
        match name.len() {
            4 if is(b"host") => FieldRole::Host,
            10 if is(b"connection") => FieldRole::Connection,
            14 if is(b"content-length") => FieldRole::ContentLength,
            17 if is(b"transfer-encoding") => FieldRole::TransferEncoding,
            _ => FieldRole::Other,
        }
    }
}

#[cfg(test)]
#[path = "framing_table.rs"]
mod table;
