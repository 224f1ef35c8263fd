//! The head writer: start lines, field lines and the framing fields the
//! encoder adds itself.

use http::header::HeaderMap;
use http::{Method, Uri, Version};

use crate::error::UsageError;
use crate::framing::FramingFields;
use crate::wire::sealed::Sealed;
use bytes::BytesMut;

use crate::grammar::write_decimal;

/// The version written in a start line: HTTP/1.0 when the message says so,
/// HTTP/1.1 otherwise; HTTP/2 and later cannot be written.
pub(crate) fn version_bytes(version: Version) -> Result<&'static [u8; 8], UsageError> {
    match version {
        Version::HTTP_10 => Ok(b"HTTP/1.0"),
        Version::HTTP_2 | Version::HTTP_3 => Err(UsageError::InvalidHead),
        _ => Ok(b"HTTP/1.1"),
    }
}

/// Writes one field line, `name: value\r\n`: every field line an encoder
/// writes, in a head or a trailer section, goes through here. The name is
/// written in `title` case (the first letter and each letter after a `-`
/// in upper case), or as given (`http` holds names in lower case).
#[inline]
pub(crate) fn write_field(out: &mut BytesMut, name: &[u8], value: &[u8], title: bool) {
    if title {
        push_title_case(out, name);
    } else {
        out.extend_from_slice(name);
    }
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Copies `name` in title case, through a small stack buffer.
#[inline(never)]
fn push_title_case(out: &mut BytesMut, name: &[u8]) {
    let mut buf = [0u8; 64];
    let mut upper = true;
    for piece in name.chunks(buf.len()) {
        for (dst, &b) in buf.iter_mut().zip(piece) {
            *dst = if upper { b.to_ascii_uppercase() } else { b };
            upper = b == b'-';
        }
        out.extend_from_slice(&buf[..piece.len()]);
    }
}

/// The fields the encoder adds after the caller's.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Added<'a> {
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
    /// `date: <IMF-fixdate>\r\n`, the whole line.
    pub(crate) date: Option<&'a [u8; crate::date::LINE]>,
}

impl Added<'_> {
    /// `true` when a caller's field noted in `seen` is left out.
    #[inline]
    pub(crate) fn leaves_out_any(&self, seen: &FramingFields) -> bool {
        (self.strip_framing && seen.content_length.is_some())
            || ((self.strip_framing || self.strip_te) && seen.transfer_encoding)
    }

    /// `true` when the caller's field `name` (in any case) is left out.
    fn leaves_out(&self, name: &[u8]) -> bool {
        (self.strip_framing && name.eq_ignore_ascii_case(b"content-length"))
            || ((self.strip_framing || self.strip_te)
                && name.eq_ignore_ascii_case(b"transfer-encoding"))
    }
}

/// The order and spelling asked for a head's fields (a
/// [`FieldOrder`](crate::wire::FieldOrder)'s or a
/// [`WireHead`](crate::wire::WireHead)'s names), and room to count with.
pub struct Ordered<'a> {
    pub(crate) names: &'a dyn Sealed,
    /// How many values of each field of the map the names stood for, by
    /// the field's place among the map's names (see [`write_ordered`]);
    /// kept by the encoder for reuse.
    pub(crate) used: &'a mut Vec<usize>,
}

/// Writes a head's fields: `Host` when the encoder supplies it, the
/// caller's fields (in the order asked for, else in the order and
/// spelling `http` holds them), the added fields and the empty line.
pub(crate) fn write_fields(
    out: &mut BytesMut,
    headers: &HeaderMap,
    host: Option<&[u8]>,
    added: &Added<'_>,
    title: bool,
    order: Option<Ordered<'_>>,
) {
    if let Some(host) = host {
        write_field(out, b"host", host, title);
    }
    if let Some(order) = order {
        write_ordered(out, headers, added, title, order);
    } else {
        for (name, value) in headers {
            let name = name.as_str().as_bytes();
            if !added.leaves_out(name) {
                write_field(out, name, value.as_bytes(), title);
            }
        }
    }
    write_added(out, added, title);
}

/// Writes the caller's fields (a head's, or a trailer section's) in
/// `order` (the rule is on [`FieldOrder`](crate::wire::FieldOrder)): the k-th name of a field
/// stands for the k-th value of that field in the map, written in its
/// place and spelling if the map has it; then the values no name stood
/// for, in the map's order, in title case when `title`.
///
/// A field of the map is known by its place among the map's names: the
/// count of values each has had written is kept against it, so that
/// names are compared case-insensitively only to find the field a name
/// stands for.
#[inline(never)]
fn write_ordered(
    out: &mut BytesMut,
    headers: &HeaderMap,
    added: &Added<'_>,
    title: bool,
    order: Ordered<'_>,
) {
    let used = order.used;
    used.clear();
    used.resize(headers.keys_len(), 0);
    order.names.each_name(&mut |name| {
        if added.leaves_out(name) {
            return;
        }
        let mut keys = headers.keys().enumerate();
        let Some((i, key)) =
            keys.find(|(_, key)| key.as_str().as_bytes().eq_ignore_ascii_case(name))
        else {
            return;
        };
        if let Some(value) = headers.get_all(key).iter().nth(used[i]) {
            write_field(out, name, value.as_bytes(), false);
        }
        used[i] += 1;
    });
    for (key, &listed) in headers.keys().zip(used.iter()) {
        let name = key.as_str().as_bytes();
        if added.leaves_out(name) {
            continue;
        }
        for value in headers.get_all(key).iter().skip(listed) {
            write_field(out, name, value.as_bytes(), title);
        }
    }
}

/// Writes the fields the encoder adds and the empty line that ends the
/// head.
pub(crate) fn write_added(out: &mut BytesMut, added: &Added<'_>, title: bool) {
    if let Some(line) = added.date {
        if title {
            let mut line = *line;
            line[0] = b'D';
            out.extend_from_slice(&line);
        } else {
            out.extend_from_slice(line);
        }
    }
    if let Some(n) = added.content_length {
        let mut buf = [0u8; 20];
        let digits = write_decimal(&mut buf, n);
        if !(added.chunked || added.close || added.keep_alive || title) {
            // The common end of a head, the length and the empty line.
            out.extend_from_slice(b"content-length: ");
            out.extend_from_slice(digits);
            out.extend_from_slice(b"\r\n\r\n");
            return;
        }
        write_field(out, b"content-length", digits, title);
    }
    if added.chunked {
        write_field(out, b"transfer-encoding", b"chunked", title);
    }
    if added.close {
        write_field(out, b"connection", b"close", title);
    }
    if added.keep_alive {
        write_field(out, b"connection", b"keep-alive", title);
    }
    out.extend_from_slice(b"\r\n");
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
        (None, None) if uri.path() != "*" => Ok(TargetForm::Origin),
        // `*` is OPTIONS's alone.
        (None, None) if method == Method::OPTIONS => Ok(TargetForm::Asterisk),
        _ => Err(UsageError::InvalidHead),
    }
}

/// The form of a request-target as received.
pub(crate) fn form_of(target: &[u8]) -> TargetForm {
    match target {
        [b'/', ..] => TargetForm::Origin,
        b"*" => TargetForm::Asterisk,
        _ if memchr::memmem::find(target, b"://").is_some() => TargetForm::Absolute,
        _ => TargetForm::Authority,
    }
}

/// Writes `METHOD target HTTP/1.1\r\n`; `raw` is the target to write as
/// it is, when one was received and still stands for `uri`.
pub(crate) fn write_request_line(
    out: &mut BytesMut,
    method: &Method,
    uri: &Uri,
    form: TargetForm,
    raw: Option<&[u8]>,
    version: &[u8],
) {
    out.extend_from_slice(method.as_str().as_bytes());
    out.extend_from_slice(b" ");
    // The form says which parts the URI has (see `target_form`).
    let authority = uri.authority().map_or("", |a| a.as_str()).as_bytes();
    match (raw, form) {
        (Some(raw), _) => out.extend_from_slice(raw),
        (None, TargetForm::Asterisk) => out.extend_from_slice(b"*"),
        (None, TargetForm::Authority) => out.extend_from_slice(authority),
        (None, TargetForm::Absolute | TargetForm::Origin) => {
            if form == TargetForm::Absolute {
                out.extend_from_slice(uri.scheme_str().unwrap_or_default().as_bytes());
                out.extend_from_slice(b"://");
                out.extend_from_slice(authority);
            }
            let path = uri.path();
            out.extend_from_slice(if path.is_empty() {
                b"/"
            } else {
                path.as_bytes()
            });
            if let Some(q) = uri.query() {
                out.extend_from_slice(b"?");
                out.extend_from_slice(q.as_bytes());
            }
        }
    }
    out.extend_from_slice(b" ");
    out.extend_from_slice(version);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title(name: &str) -> String {
        let mut out = BytesMut::new();
        push_title_case(&mut out, name.as_bytes());
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn title_case_names() {
        assert_eq!(title("content-length"), "Content-Length");
        assert_eq!(title("x-request-id"), "X-Request-Id");
        assert_eq!(title("etag"), "Etag");
        assert_eq!(title("a--b-"), "A--B-");
        assert_eq!(title("-x"), "-X");
        assert_eq!(title(""), "");
        // Across the stack buffer's boundary, the state carries over.
        let long = format!("{}-b", "a".repeat(63));
        assert_eq!(title(&long), format!("A{}-B", "a".repeat(62)));
        let long = format!("{}-b", "a".repeat(64));
        assert_eq!(title(&long), format!("A{}-B", "a".repeat(63)));
    }
}
