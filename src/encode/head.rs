//! The head writer: start lines, field lines and the framing fields the
//! encoder adds itself.

use http::header::HeaderMap;
use http::{Method, Uri, Version};

use crate::error::UsageError;
use crate::framing::FramingFields;
use crate::wire::sealed::Sealed;
use bytes::BytesMut;

use crate::grammar::{names_match, write_decimal};

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
    /// `connection: close` or `connection: keep-alive`.
    pub(crate) connection: Option<&'static [u8]>,
    /// Leave out the caller's `Content-Length` and `Transfer-Encoding`.
    pub(crate) strip_framing: bool,
    /// Leave out the caller's `Transfer-Encoding` only.
    pub(crate) strip_te: bool,
    /// `date: <IMF-fixdate>\r\n`, the whole line.
    pub(crate) date: Option<&'a [u8; crate::date::LINE]>,
    /// `host: ...`, before the caller's fields.
    pub(crate) host: Option<&'a [u8]>,
}

impl Added<'_> {
    /// `true` when the caller's fields, noted in `seen` as they were
    /// written, must be written again: a `Host` goes before them, or one
    /// of them is left out.
    #[inline]
    fn rewrites(&self, seen: &FramingFields) -> bool {
        self.host.is_some()
            || (self.strip_framing && seen.content_length.is_some())
            || ((self.strip_framing || self.strip_te) && seen.transfer_encoding)
    }

    /// `true` when the caller's field `name` (in any case) is left out.
    #[inline]
    fn leaves_out(&self, name: &[u8]) -> bool {
        (self.strip_framing || self.strip_te) && self.leaves_out_framing(name)
    }

    #[cold]
    fn leaves_out_framing(&self, name: &[u8]) -> bool {
        (self.strip_framing && name.eq_ignore_ascii_case(b"content-length"))
            || name.eq_ignore_ascii_case(b"transfer-encoding")
    }
}

/// The order and spelling asked for a head's fields (a
/// [`FieldOrder`](crate::wire::FieldOrder)'s or a
/// [`WireHead`](crate::wire::WireHead)'s names), and room to write with.
pub struct Ordered<'a> {
    pub(crate) names: &'a dyn Sealed,
    /// Kept by the encoder for reuse (see [`write_ordered`]).
    pub(crate) room: &'a mut OrderRoom,
}

/// The room an ordered write works in, kept by an encoder so that writing
/// a head in an order allocates nothing once it has written one: the
/// values taken out of the map ahead of their turn (see [`write_ordered`]).
#[derive(Debug, Default)]
pub(crate) struct OrderRoom {
    ahead: Vec<Line<'static>>,
}

/// A value of the map and its name, in lower case as the map holds it.
type Line<'a> = (&'a [u8], &'a [u8]);

/// An empty vector with the allocation of `v`, for elements of another
/// type of the same layout (the room's, with the lifetime of one write):
/// collecting from a vector's own iterator reuses its allocation.
fn emptied<T, U>(v: Vec<T>) -> Vec<U> {
    v.into_iter().filter_map(|_| None).collect()
}

/// Writes a head's fields after its start line (written from `start`
/// on), and decides with `decide` how it is framed: the caller's fields
/// are written (in the order asked for, else as the map holds them)
/// while what the framing depends on is noted, so that they are gone
/// over once. What is then decided rarely undoes it: a field the encoder
/// leaves out, or a `Host` it puts first, has the fields written again
/// after the start line; a head refused is taken back, `out` left as it
/// was.
#[inline]
pub(crate) fn write_head<'d, T>(
    out: &mut BytesMut,
    start: usize,
    headers: &HeaderMap,
    title: bool,
    order: Option<Ordered<'_>>,
    decide: impl FnOnce(&FramingFields) -> Result<(Added<'d>, T), UsageError>,
) -> Result<T, UsageError> {
    let fields = out.len();
    let mut seen = FramingFields::default();
    let order = match order {
        Some(Ordered { names, room }) => {
            let once = Ordered {
                names,
                room: &mut *room,
            };
            let nothing = Added::default();
            write_ordered(out, headers, &nothing, title, once, &mut seen);
            Some(Ordered { names, room })
        }
        None => {
            for (name, value) in headers {
                let (name, value) = (name.as_str().as_bytes(), value.as_bytes());
                seen.note_named(name, value);
                write_field(out, name, value, title);
            }
            None
        }
    };
    match decide(&seen) {
        Ok((added, decided)) => {
            if added.rewrites(&seen) {
                out.truncate(fields);
                write_fields(out, headers, &added, title, order);
            } else {
                write_added(out, &added, title);
            }
            Ok(decided)
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// Writes a head's fields: `Host` when the encoder supplies it, the
/// caller's fields (in the order asked for, else in the order and
/// spelling `http` holds them), the added fields and the empty line.
pub(crate) fn write_fields(
    out: &mut BytesMut,
    headers: &HeaderMap,
    added: &Added<'_>,
    title: bool,
    order: Option<Ordered<'_>>,
) {
    if let Some(host) = added.host {
        write_field(out, b"host", host, title);
    }
    if let Some(order) = order {
        // Noted before, when the fields were first written.
        let again = &mut FramingFields::default();
        write_ordered(out, headers, added, title, order, again);
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
/// `order` (the rule is on [`FieldOrder`](crate::wire::FieldOrder)): the
/// k-th name of a field stands for the k-th value of that field in the
/// map, written in its place and spelling if the map has it; then the
/// values no name stood for, in the map's order, in title case when
/// `title`. Each value written is noted in `seen`: with nothing left out,
/// that is every value of the map, once.
///
/// The map is followed as the names go: each name takes the first value
/// of its name among those taken out of the map ahead of their turn, else
/// the map's next values are taken until one of its name comes, those
/// passed over kept aside, in order, for the names to come. Names that
/// follow the map (a decoded head whose map was only added to) compare
/// each with the next value alone; a field removed from the map (which
/// `HeaderMap` fills with its last one), or repeated apart from its first
/// line, sets a few values aside. Taken first come first, the values of
/// one name go to its names in the map's order, the k-th to the k-th; and
/// those left, aside then in the map, are in the map's order.
#[inline(never)]
fn write_ordered(
    out: &mut BytesMut,
    headers: &HeaderMap,
    added: &Added<'_>,
    title: bool,
    order: Ordered<'_>,
    seen: &mut FramingFields,
) {
    let mut ahead: Vec<Line<'_>> = emptied(std::mem::take(&mut order.room.ahead));
    let mut items = headers
        .iter()
        .map(|(k, v)| (k.as_str().as_bytes(), v.as_bytes()));
    for name in order.names.names_in_order() {
        let mine = |&(lower, _): &Line<'_>| names_match(name, lower);
        let line = match ahead.iter().position(mine) {
            Some(at) => Some(ahead.remove(at)),
            None => items.by_ref().find(|line| {
                mine(line) || {
                    ahead.push(*line);
                    false
                }
            }),
        };
        if let Some((lower, value)) = line
            && !added.leaves_out(lower)
        {
            seen.note_named(lower, value);
            write_field(out, name, value, false);
        }
    }
    for (lower, value) in ahead.drain(..).chain(items) {
        if !added.leaves_out(lower) {
            seen.note_named(lower, value);
            write_field(out, lower, value, title);
        }
    }
    order.room.ahead = emptied(ahead);
}

/// Writes the fields the encoder adds and the empty line that ends the
/// head.
fn write_added(out: &mut BytesMut, added: &Added<'_>, title: bool) {
    if let Some(line) = added.date {
        if title {
            // The value of `date: <IMF-fixdate>\r\n`.
            write_field(out, b"date", &line[6..line.len() - 2], true);
        } else {
            out.extend_from_slice(line);
        }
    }
    if let Some(n) = added.content_length {
        let mut buf = [0u8; 20];
        let digits = write_decimal(&mut buf, n);
        if !(added.chunked || added.connection.is_some() || title) {
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
    if let Some(option) = added.connection {
        write_field(out, b"connection", option, title);
    }
    out.extend_from_slice(b"\r\n");
}

/// Checks that the URI has a request-target form for the method:
/// authority-form (`host:port`, an absolute URI without a path too) for
/// CONNECT and for it alone, absolute-form (`http://host/path?query`) for a
/// URI with scheme and authority, `*` for OPTIONS alone, origin-form
/// (`/path?query`) for a URI with neither.
pub(crate) fn check_target(method: &Method, uri: &Uri) -> Result<(), UsageError> {
    let path = uri.path();
    let fits = match (uri.scheme(), uri.authority()) {
        _ if method == Method::CONNECT => {
            uri.authority().is_some() && (uri.scheme().is_none() || path == "/" || path.is_empty())
        }
        (Some(_), Some(_)) => true,
        (None, None) => path != "*" || method == Method::OPTIONS,
        _ => false,
    };
    fits.then_some(()).ok_or(UsageError::InvalidHead)
}

/// Writes `METHOD target HTTP/1.1\r\n`, the target in the form
/// [`check_target`] found: the authority alone for CONNECT, else the
/// scheme and authority when the URI has them, then the path (`*` for
/// `*`) and query. `raw` is the target to write as it is, when one was
/// received and still stands for `uri`.
pub(crate) fn write_request_line(
    out: &mut BytesMut,
    method: &Method,
    uri: &Uri,
    raw: Option<&[u8]>,
    version: &[u8],
) {
    out.extend_from_slice(method.as_str().as_bytes());
    out.extend_from_slice(b" ");
    let authority = uri.authority().map_or("", |a| a.as_str()).as_bytes();
    if let Some(raw) = raw {
        out.extend_from_slice(raw);
    } else if method == Method::CONNECT {
        out.extend_from_slice(authority);
    } else {
        if let Some(scheme) = uri.scheme_str() {
            out.extend_from_slice(scheme.as_bytes());
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

    /// The rule of `FieldOrder`, written plainly: each name looked up in
    /// the map by a search of its keys, then its k-th value.
    fn ordered_by_rule(headers: &HeaderMap, added: &Added<'_>, names: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut used = vec![0; headers.keys_len()];
        let mut line = |name: &[u8], value: &[u8]| {
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        };
        for name in names {
            let name = name.as_bytes();
            if added.leaves_out(name) {
                continue;
            }
            let mut keys = headers.keys().enumerate();
            let Some((i, key)) =
                keys.find(|(_, k)| k.as_str().as_bytes().eq_ignore_ascii_case(name))
            else {
                continue;
            };
            if let Some(value) = headers.get_all(key).iter().nth(used[i]) {
                line(name, value.as_bytes());
            }
            used[i] += 1;
        }
        for (key, &listed) in headers.keys().zip(&used) {
            if added.leaves_out(key.as_str().as_bytes()) {
                continue;
            }
            for value in headers.get_all(key).iter().skip(listed) {
                line(key.as_str().as_bytes(), value.as_bytes());
            }
        }
        out
    }

    #[test]
    fn ordered_writes_follow_the_rule() {
        let names = [
            "Set-Cookie",
            "x-a",
            "Content-Length",
            "SERVER",
            "transfer-encoding",
            "x-b",
        ];
        let mut room = OrderRoom::default();
        // Every map of up to five lines of these names (values numbered),
        // against orders that follow it, reverse it, repeat or miss names.
        let mut seed = 7u32;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as usize % n
        };
        for round in 0..20_000 {
            let mut headers = HeaderMap::new();
            for v in 0..next(6) {
                let name = names[next(names.len())].to_ascii_lowercase();
                let name = http::HeaderName::from_bytes(name.as_bytes()).unwrap();
                headers.append(name, v.to_string().parse().unwrap());
            }
            if next(3) == 0 && !headers.is_empty() {
                let key = headers
                    .keys()
                    .nth(next(headers.keys_len()))
                    .unwrap()
                    .clone();
                headers.remove(key);
            }
            let mut order: Vec<&str> = (0..next(8)).map(|_| names[next(names.len())]).collect();
            if round % 2 == 0 {
                // An order that follows the map, for a while or to its end.
                let spelled = |key: &http::HeaderName| {
                    let i = names
                        .iter()
                        .position(|n| n.eq_ignore_ascii_case(key.as_str()));
                    names[i.unwrap()]
                };
                let mut following: Vec<&str> = headers.iter().map(|(k, _)| spelled(k)).collect();
                following.truncate(following.len() - next(following.len() + 1) / 2);
                if next(2) == 0 {
                    following.extend_from_slice(&order[..order.len() / 2]);
                }
                order = following;
            }
            let added = Added {
                strip_framing: round % 5 == 1,
                strip_te: round % 5 == 2,
                ..Added::default()
            };
            let wire = crate::wire::FieldOrder::from_names(&order).unwrap();
            let mut out = BytesMut::new();
            let ordered = Ordered {
                names: &wire,
                room: &mut room,
            };
            let mut seen = FramingFields::default();
            write_ordered(&mut out, &headers, &added, false, ordered, &mut seen);
            let want = ordered_by_rule(&headers, &added, &order);
            if !(added.strip_framing || added.strip_te) {
                // Every value noted, once.
                let all = FramingFields::of(&headers);
                assert_eq!(format!("{seen:?}"), format!("{all:?}"), "{headers:?}");
            }
            assert_eq!(
                out[..],
                want[..],
                "{headers:?} in {order:?}: {}",
                String::from_utf8_lossy(&out)
            );
        }
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
