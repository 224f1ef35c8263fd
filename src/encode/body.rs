//! Body framers: how body bytes, the end of a body and trailers are written
//! for each framing.

use bytes::Bytes;
use http::HeaderMap;

use crate::chunk_ext::ChunkExtensions;
use crate::error::UsageError;
use crate::framing::BodyKind;
use crate::grammar::forbidden_in_trailers;
use crate::segments::Segments;

use super::head::{Added, Ordered, write_fields};

/// The body framer of the message being sent.
#[derive(Debug, Clone)]
pub enum BodyEncoder {
    /// No body may follow (1xx, 204, 304, 2xx to CONNECT, a request
    /// without framing fields). Empty writes are accepted.
    Empty,
    /// A response to HEAD: the head announced a body that is not sent.
    /// Bytes are counted against `declared` and dropped, or refused when
    /// `strict`.
    Discard {
        declared: Option<u64>,
        seen: u64,
        strict: bool,
    },
    /// `Content-Length: declared`.
    Length { declared: u64, sent: u64 },
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Delimited by closing the connection: data passes through.
    Close,
}

impl BodyEncoder {
    /// The framer of a body of `declared` bytes, checked against the
    /// whole body when it is given (`full`): too long as [`within`]
    /// refuses it, or too short.
    pub(crate) fn length(declared: u64, full: Option<u64>) -> Result<Self, UsageError> {
        if let Some(sent) = full {
            if sent < declared {
                return Err(UsageError::BodyTooShort { declared, sent });
            }
            within(Some(declared), 0, sent)?;
        }
        Ok(BodyEncoder::Length { declared, sent: 0 })
    }

    /// The framing the encoder chooses for a body the caller gave no
    /// framing field for, noted in the fields it adds: `Content-Length`
    /// for a whole body (`full`), chunked for a stream.
    pub(crate) fn chosen(full: Option<u64>, added: &mut Added<'_>) -> Self {
        match full {
            Some(declared) => {
                added.content_length = full;
                BodyEncoder::Length { declared, sent: 0 }
            }
            None => {
                added.chunked = true;
                BodyEncoder::Chunked
            }
        }
    }

    /// How the body is delimited.
    pub(crate) fn kind(&self) -> BodyKind {
        match self {
            BodyEncoder::Empty | BodyEncoder::Discard { .. } => BodyKind::Empty,
            BodyEncoder::Length { declared, .. } => BodyKind::Length(*declared),
            BodyEncoder::Chunked => BodyKind::Chunked,
            BodyEncoder::Close => BodyKind::CloseDelimited,
        }
    }

    /// Queues body bytes, or refuses them leaving `out` untouched. A chunk
    /// written carries `extensions`, which are then taken.
    pub(crate) fn data(
        &mut self,
        out: &mut Segments,
        data: Bytes,
        extensions: &mut Option<Box<ChunkExtensions>>,
    ) -> Result<(), UsageError> {
        let len = data.len() as u64;
        if len == 0 {
            // Never a zero-size chunk: it would end a chunked body.
            return Ok(());
        }
        match self {
            BodyEncoder::Empty | BodyEncoder::Discard { strict: true, .. } => {
                return Err(UsageError::BodyNotAllowed);
            }
            BodyEncoder::Discard { declared, seen, .. } => *seen = within(*declared, *seen, len)?,
            BodyEncoder::Length { declared, sent } => {
                *sent = within(Some(*declared), *sent, len)?;
                out.push_bytes(data);
            }
            BodyEncoder::Chunked => {
                chunk_line(out, len, extensions);
                out.push_bytes(data);
                out.push_slice(b"\r\n");
            }
            BodyEncoder::Close => out.push_bytes(data),
        }
        Ok(())
    }

    /// Queues a whole body the plan has checked against this framing
    /// already (its length against the declared one, bytes where none may
    /// be): what [`data`](Self::data) then [`finish`](Self::finish) would
    /// write, without checking again.
    #[inline(always)]
    pub(crate) fn whole(&self, out: &mut Segments, data: Bytes) {
        match self {
            BodyEncoder::Length { .. } | BodyEncoder::Close => out.push_bytes(data),
            BodyEncoder::Chunked => {
                if !data.is_empty() {
                    chunk_line(out, data.len() as u64, &mut None);
                    out.push_bytes(data);
                    out.push_slice(b"\r\n");
                }
                out.push_slice(b"0\r\n\r\n");
            }
            // Bytes for a response to HEAD are dropped; none reach here
            // for a message without a body.
            BodyEncoder::Empty | BodyEncoder::Discard { .. } => {}
        }
    }

    /// Ends the body: the last-chunk (with `extensions`, which are then
    /// taken) and trailer section for chunked, nothing otherwise. The
    /// trailers are written in `order` when one is given. Leaves `out`
    /// untouched on error.
    pub(crate) fn finish(
        &mut self,
        out: &mut Segments,
        trailers: Option<&HeaderMap>,
        title: bool,
        extensions: &mut Option<Box<ChunkExtensions>>,
        order: Option<Ordered<'_>>,
    ) -> Result<(), UsageError> {
        let trailers = trailers.filter(|t| !t.is_empty());
        if let Some(trailers) = trailers {
            if !matches!(self, BodyEncoder::Chunked | BodyEncoder::Discard { .. }) {
                return Err(UsageError::TrailersNotAllowed);
            }
            if trailers.keys().any(forbidden_in_trailers) {
                return Err(UsageError::ForbiddenTrailer);
            }
        }
        if let BodyEncoder::Length { declared, sent } = *self
            && sent < declared
        {
            return Err(UsageError::BodyTooShort { declared, sent });
        }
        if let BodyEncoder::Chunked = self {
            chunk_line(out, 0, extensions);
            match trailers {
                // With nothing added, the fields end with the empty line.
                Some(trailers) => out.append(|out| {
                    write_fields(out, trailers, &Added::default(), title, order);
                }),
                None => out.push_slice(b"\r\n"),
            }
        }
        Ok(())
    }
}

/// `sent + len` body bytes, refused past `declared`.
pub(crate) fn within(declared: Option<u64>, sent: u64, len: u64) -> Result<u64, UsageError> {
    let attempted = sent.saturating_add(len);
    match declared {
        Some(declared) if attempted > declared => Err(UsageError::BodyTooLong {
            declared,
            attempted,
        }),
        _ => Ok(attempted),
    }
}

/// Writes a chunk-size line for `len` bytes (the last-chunk's for 0),
/// with `extensions`, which are then taken.
fn chunk_line(out: &mut Segments, len: u64, extensions: &mut Option<Box<ChunkExtensions>>) {
    let mut line = [0u8; 18];
    let n = hex_line(&mut line, len);
    match extensions.take() {
        None => out.push_slice(&line[..n]),
        Some(extensions) => {
            out.push_slice(&line[..n - 2]);
            out.push_bytes((*extensions).into_bytes());
            out.push_slice(b"\r\n");
        }
    }
}

/// Formats `{n:x}\r\n` into `buf` and returns its length.
fn hex_line(buf: &mut [u8; 18], n: u64) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // One digit per four bits, from the highest one set; one for 0.
    let len = (16 - n.leading_zeros() as usize / 4).max(1);
    for (i, digit) in buf[..len].iter_mut().enumerate() {
        *digit = HEX[(n >> (4 * (len - 1 - i)) & 0xf) as usize];
    }
    buf[len..len + 2].copy_from_slice(b"\r\n");
    len + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lines() {
        let mut b = [0u8; 18];
        for n in [0u64, 1, 15, 16, 1024, u64::MAX] {
            let len = hex_line(&mut b, n);
            assert_eq!(&b[..len], format!("{n:x}\r\n").as_bytes());
        }
    }
}
