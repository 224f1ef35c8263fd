//! The trailer section of a chunked body: read by the head reader (field
//! lines only), then built into a map and, with the wire view, kept as
//! received.

use bytes::{Buf, Bytes, BytesMut};
use http::header::HeaderMap;

use super::{ChunkState, Chunked, Trailers};
use crate::error::{Error, ErrorKind};
use crate::grammar::forbidden_in_trailers;
use crate::head::build;
use crate::head::names::NameCache;
use crate::head::reader::{Options, Reader};
use crate::limits::Limits;
use crate::wire::WireTrailers;

impl Chunked {
    /// Reads the trailer section at the start of `buf`: its fields if it
    /// has any; `None` with the body done, or with more input needed.
    pub(super) fn trailer_step(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        names: &mut NameCache,
    ) -> Result<Option<Box<Trailers>>, ErrorKind> {
        let fresh = self.trailers.as_ref().is_none_or(|r| r.is_fresh());
        if fresh && buf.starts_with(b"\r\n") {
            // The usual end of a body: no trailer section.
            buf.advance(2);
            self.state = ChunkState::Done;
            return Ok(None);
        }
        let reader = self.trailers.get_or_insert_with(Box::default);
        let options = Options {
            trailers: true,
            rules: &self.rules,
            max_target: 0,
            max_bytes: limits.max_trailer_bytes,
            max_lines: limits.max_fields,
            eof: false,
        };
        let section = match reader.read(buf, &options, names) {
            Ok(Some(len)) => buf.split_to(len).freeze(),
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.refused(e)),
        };
        let event = trailer_section(reader, section, names, self.wire);
        // An error leaves the body unfinished.
        let event = event.map_err(|e| self.refused(e))?;
        self.state = ChunkState::Done;
        Ok(event)
    }
}

/// Parses the trailer section `section` (its final empty line included)
/// that `reader` read, with its wire view when `wire` asks for it: `None`
/// without fields. Out of line: it comes once per body, not per chunk.
#[inline(never)]
fn trailer_section(
    reader: &mut Reader,
    section: Bytes,
    names: &mut NameCache,
    wire: bool,
) -> Result<Option<Box<Trailers>>, Error> {
    if let Some(fault) = reader.take_fault() {
        return Err(fault);
    }
    let record = reader.record();
    if record.fields.is_empty() {
        // No field, or every line skipped (`skip_invalid_fields`).
        return Ok(None);
    }
    let mut fields = HeaderMap::with_capacity(record.fields.len());
    build::fields(&section, record, false, names, &mut fields)?;
    if fields.keys().any(forbidden_in_trailers) {
        return Err(ErrorKind::InvalidTrailer.into());
    }
    // The section's bytes are the view's: no copy, and nothing at all
    // without the view.
    let wire = wire.then(|| WireTrailers::new(section, record));
    Ok(Some(Box::new(Trailers { fields, wire })))
}
