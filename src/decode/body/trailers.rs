//! The trailer section of a chunked body: read by the head reader (field
//! lines only), then built into a map and, with the wire view, kept as
//! received.

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;

use super::{BodyEvent, ChunkState, Chunked, Trailers};
use crate::error::ErrorKind;
use crate::grammar::forbidden_in_trailers;
use crate::head::build;
use crate::head::names::NameCache;
use crate::head::reader::{Options, Section};
use crate::limits::Limits;
use crate::wire::WireTrailers;

impl Chunked {
    /// Reads the trailer section at the start of `buf`.
    pub(super) fn trailer_step(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
    ) -> Result<BodyEvent, ErrorKind> {
        let fresh = self.trailers.as_ref().is_none_or(|r| r.is_fresh());
        if fresh && buf.starts_with(b"\r\n") {
            // The usual end of a body: no trailer section.
            buf.advance(2);
            self.state = ChunkState::Done;
            return Ok(BodyEvent::Done);
        }
        let reader = self.trailers.get_or_insert_with(Box::default);
        let options = Options {
            section: Section::Trailers,
            rules: &self.rules,
            max_target: 0,
            max_bytes: limits.max_trailer_bytes,
            max_lines: limits.max_fields,
            eof: false,
        };
        let len = match reader.read(buf, &options, names) {
            Ok(Some(len)) => len,
            Ok(None) => return Ok(BodyEvent::NeedMore),
            Err(e) => return Err(self.refused(e)),
        };
        let section = buf.split_to(len).freeze();
        self.trailer_section(section, names)
    }

    /// Forgets the trailer section read before, for the next one.
    pub(super) fn reset_trailers(&mut self) {
        if let Some(reader) = &mut self.trailers {
            reader.reset();
        }
    }

    /// Parses the trailer section `section` (its final empty line
    /// included). Out of line: it comes once per body, not per chunk.
    #[inline(never)]
    fn trailer_section(
        &mut self,
        section: Bytes,
        names: &mut NameCache,
    ) -> Result<BodyEvent, ErrorKind> {
        let Some(reader) = self.trailers.as_deref_mut() else {
            return Ok(BodyEvent::Done);
        };
        if let Some(fault) = reader.take_fault() {
            return Err(self.refused(fault));
        }
        self.state = ChunkState::Done;
        let record = reader.record();
        if record.fields.is_empty() {
            // No field, or every line skipped (`skip_invalid_fields`).
            return Ok(BodyEvent::Done);
        }
        let mut map = HeaderMap::with_capacity(record.fields.len());
        if let Err(e) = build::fields(&section, record, false, names, &mut map) {
            return Err(self.refused(e));
        }
        if map.keys().any(forbidden_in_trailers) {
            return Err(ErrorKind::InvalidTrailer);
        }
        // The section's bytes are the view's: no copy, and nothing at
        // all without the view.
        let wire = self.wire.then(|| WireTrailers::new(section, record));
        Ok(BodyEvent::Trailers(Box::new(Trailers {
            fields: map,
            wire,
        })))
    }
}
