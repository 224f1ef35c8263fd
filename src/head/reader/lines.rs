//! The usual lines of a head read at once: a request line, a status line
//! and a field line of the common form, whole in the buffer. Anything else
//! is left to the byte-by-byte reading of the parent module, from the same
//! byte, so nothing is accepted here that it would not accept.

use http::Version;

use super::{MAX_NAME, Options, Reader};
use crate::framing::FieldRole as Role;
use crate::grammar::{target_end, text_end, token_end};
use crate::head::names::{NameCache, same};
use crate::head::record::{Field, NO_ENTRY};
use crate::head::target::form_fits;

impl Reader {
    /// The request line when it is whole in `head[..upto]` and of the
    /// usual form, `token SP target SP HTTP/1.x CRLF` with a target whose
    /// form fits the method: recorded, and where the next line starts.
    /// `None` for anything else, read byte by byte from the start.
    #[inline(always)]
    pub(super) fn request_line(&mut self, head: &[u8], upto: usize, o: &Options) -> Option<usize> {
        // Nothing past the bound is looked at.
        let head = &head[..upto];
        let m = token_end(head, 0, upto);
        if m == 0 || head.get(m) != Some(&b' ') {
            return None;
        }
        let t = target_end(head, m + 1, upto);
        if t == m + 1 || t - (m + 1) > o.max_target || head.get(t) != Some(&b' ') {
            return None;
        }
        let line = head.get(t + 1..t + 11)?;
        let version = usual_version(&line[..8])?;
        if &line[8..] != b"\r\n" || !form_fits(&head[..m], &head[m + 1..t]) {
            return None;
        }
        let r = &mut self.record;
        r.method_end = m;
        r.target = (m + 1, t);
        r.version = version;
        r.line_end = t + 9;
        Some(t + 11)
    }

    /// The status line when it is whole in `head[..upto]` and of the
    /// usual form, `HTTP/1.x SP 3DIGIT SP text CRLF`, as
    /// [`request_line`](Self::request_line) reads a request line.
    #[inline(always)]
    pub(super) fn status_line(&mut self, head: &[u8], upto: usize) -> Option<usize> {
        // Nothing past the bound is looked at.
        let head = &head[..upto];
        let line = head.get(..13)?;
        let version = usual_version(&line[..8])?;
        let code = &line[9..12];
        if line[8] != b' '
            || line[12] != b' '
            || !code.iter().all(u8::is_ascii_digit)
            || code[0] == b'0'
        {
            return None;
        }
        let end = text_end(head, 13, upto);
        if end + 1 >= upto || head[end] != b'\r' || head[end + 1] != b'\n' {
            return None;
        }
        let r = &mut self.record;
        r.status = code.iter().fold(0, |n, &d| n * 10 + u16::from(d - b'0'));
        r.reason = (13, end);
        r.version = version;
        r.line_end = end;
        Some(end + 2)
    }

    /// The field line at `i` when it is whole in `head[..upto]` and of
    /// the usual form, `token ":" OWS text CRLF`: recorded, and where the
    /// next line starts. `None` for anything else, which the byte-by-byte
    /// reading then reads (and refuses, where it must) from the same
    /// byte: this accepts nothing that reading would not.
    #[inline(always)]
    pub(super) fn field_line(
        &mut self,
        head: &[u8],
        i: usize,
        upto: usize,
        o: &Options,
        names: &mut NameCache,
    ) -> Option<usize> {
        // Nothing past the bound is looked at.
        let head = &head[..upto];
        if self.lines == o.max_lines || self.fault.is_some() {
            return None;
        }
        // The name: the one the cache predicts (valid, since the cache
        // holds only valid names), or a run of tchar.
        let (name_end, entry, role) = match names.predict(&head[i..upto]) {
            Some((entry, n)) => (i + n, entry, names.role_at(entry)),
            None => {
                let end = token_end(head, i, upto);
                if end == i || end - i > MAX_NAME || head.get(end) != Some(&b':') {
                    return None;
                }
                (end, NO_ENTRY, Role::of_name(&head[i..end]))
            }
        };
        let from = ows_end(head, name_end + 1);
        // The value: the one the cache keeps for the name, byte for byte
        // (valid, since it was checked once), or a run of text.
        let (end, to, value_known) = match names.value_at(entry).map(|v| v.as_bytes()) {
            Some(known)
                if from + known.len() <= upto && same(&head[from..][..known.len()], known) =>
            {
                let to = from + known.len();
                (ows_end(head, to), to, true)
            }
            _ => {
                // Where the run stops, SP and HTAB are all it can end with.
                let end = text_end(head, from, upto);
                (end, from + head[from..end].trim_ascii_end().len(), false)
            }
        };
        if end + 1 >= upto || head[end] != b'\r' || head[end + 1] != b'\n' {
            return None;
        }
        if role != Role::Other {
            self.record.noted.note(role, &head[from..to]);
        }
        self.record.fields.push(Field {
            start: i,
            name_end,
            value: (from, to),
            role,
            folded: false,
            entry,
            value_known,
        });
        self.lines += 1;
        self.line = end + 2;
        self.after_field_line = true;
        self.skipping = false;
        Some(end + 2)
    }
}

/// `HTTP/1.1` or `HTTP/1.0`: the usual versions.
#[inline(always)]
fn usual_version(version: &[u8]) -> Option<Version> {
    match version {
        b"HTTP/1.1" => Some(Version::HTTP_11),
        b"HTTP/1.0" => Some(Version::HTTP_10),
        _ => None,
    }
}

/// Where the OWS from `from` ends: usually at once, or after one SP.
#[inline(always)]
fn ows_end(head: &[u8], mut from: usize) -> usize {
    while let Some(b' ' | b'\t') = head.get(from) {
        from += 1;
    }
    from
}
