//! What the head reader accepted of a section ([`Record`]): the start
//! line's parts and each field line's name and value, as offsets. The
//! `http` types, the wire view and the framing summary are built from it.

use std::ops::Range;

use http::Version;

use crate::framing::{FieldRole, FramingFields};

/// A field line the reader accepted: offsets in its section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field {
    /// Where the line starts (the name's first byte).
    pub(crate) start: usize,
    /// Where the name ends (before its colon, or before the whitespace
    /// `space_before_colon` allowed there).
    pub(crate) name_end: usize,
    /// The value, without the whitespace around it; an obs-folded value
    /// spans its continuation lines, line breaks included.
    pub(crate) value: (usize, usize),
    pub(crate) role: FieldRole,
    /// Continued by obs-fold.
    pub(crate) folded: bool,
    /// The name cache's entry for the name ([`NO_ENTRY`] if none was
    /// found while reading), and whether the value is the one it keeps.
    pub(crate) entry: u32,
    pub(crate) value_known: bool,
}

/// [`Field::entry`] of a name the cache did not predict.
pub(crate) const NO_ENTRY: u32 = u32::MAX;

impl Field {
    pub(crate) fn name(&self) -> Range<usize> {
        self.start..self.name_end
    }

    pub(crate) fn value(&self) -> Range<usize> {
        self.value.0..self.value.1
    }
}

/// What the reader accepted of a section, as it went.
#[derive(Debug, Default, Clone)]
pub(crate) struct Record {
    /// The end of the start line's content (without its line end).
    pub(crate) line_end: usize,
    /// A request's method is `..method_end`; its target `target`.
    pub(crate) method_end: usize,
    pub(crate) target: (usize, usize),
    /// A response's status code and reason phrase (possibly empty).
    pub(crate) status: u16,
    pub(crate) reason: (usize, usize),
    /// `HTTP/1.0`, or `HTTP/1.1` for it and the minors read as it.
    pub(crate) version: Version,
    /// The field lines accepted, in order (lines skipped are not here).
    pub(crate) fields: Vec<Field>,
    /// What the fields say about framing and the connection, noted as
    /// they are read; `refold`: an obs-fold continued a field whose value
    /// matters, and the joined values decide instead.
    pub(crate) noted: FramingFields,
    pub(crate) refold: bool,
}

impl Record {
    /// What the fields say about framing and the connection.
    #[inline]
    pub(crate) fn seen(&self, section: &[u8]) -> FramingFields {
        if self.refold {
            self.seen_folded(section)
        } else {
            self.noted
        }
    }

    /// [`seen`](Self::seen) of a head with obs-folded fields that matter.
    #[cold]
    fn seen_folded(&self, section: &[u8]) -> FramingFields {
        let mut seen = FramingFields::default();
        for field in self.fields.iter().filter(|f| f.role != FieldRole::Other) {
            // A value that was not folded comes out of `unfold` as it is.
            seen.note(field.role, &unfold(&section[field.value()]));
        }
        seen
    }
}

/// An obs-folded value with each fold (the line break and the whitespace
/// around it) replaced by one SP (RFC 9112 section 5.2).
pub(crate) fn unfold(value: &[u8]) -> Vec<u8> {
    let mut joined = Vec::with_capacity(value.len());
    for piece in value.split(|&b| b == b'\n') {
        // An accepted value's only ASCII whitespace is SP, HTAB and the
        // CRLF of a fold.
        let piece = piece.trim_ascii();
        if piece.is_empty() {
            continue;
        }
        if !joined.is_empty() {
            joined.push(b' ');
        }
        joined.extend_from_slice(piece);
    }
    joined
}
