//! Bounds on what a peer may make the decoder buffer or process.

/// Limits applied while decoding messages from a peer.
///
/// Every limit is checked on the bytes of the message itself, never on how
/// they were split into reads, so a message is accepted or refused the same
/// way whatever the read sizes. The decoder never buffers more than
/// [`max_head_bytes`](Self::max_head_bytes) of an unfinished head,
/// [`max_chunk_line_bytes`](Self::max_chunk_line_bytes) of an unfinished
/// chunk-size line, or [`max_trailer_bytes`](Self::max_trailer_bytes) of an
/// unfinished trailer section; body data is handed out as it arrives.
///
/// ```
/// let mut limits = h1proto::Limits::default();
/// limits.max_head_bytes = 16 * 1024;
/// let decoder = h1proto::RequestDecoder::new(limits);
/// # let _ = decoder;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Longest request-target in bytes. Longer targets are refused with
    /// `414 URI Too Long`. Default: 8 KiB (RFC 9112 section 3 recommends
    /// supporting request-lines of at least 8000 octets).
    pub max_target_bytes: usize,
    /// Longest head (start line, field lines and the empty line that ends
    /// them) in bytes. Longer heads are refused with `431 Request Header
    /// Fields Too Large` (or `414` while still inside the request line).
    /// Default: 64 KiB.
    pub max_head_bytes: usize,
    /// Most field lines in a head or a trailer section. More are refused with
    /// `431`. Default: 128.
    pub max_fields: usize,
    /// Longest chunk-size line of a chunked body, extensions included, in
    /// bytes. Default: 4 KiB.
    pub max_chunk_line_bytes: usize,
    /// Most chunk-extension bytes in one chunked body, over all its chunks
    /// and the last-chunk: everything on a chunk-size line between the
    /// size and the line end (`;name=value` and the whitespace around it).
    /// More are refused with
    /// [`ChunkExtensionsTooLarge`](crate::ErrorKind::ChunkExtensionsTooLarge)
    /// (`413 Content Too Large`). Default: 16 KiB, as hyper and Node.js
    /// (RFC 9112 section 7.1.1 asks a server to limit their total length).
    pub max_chunk_extension_bytes: usize,
    /// How far the framing of a chunked body may run ahead of its data, in
    /// bytes. Each chunk may carry 16 bytes of framing plus twice its data
    /// bytes for free (its chunk-size line with the line end, and the CRLF
    /// after its data); framing beyond that is counted, a later chunk's
    /// unused allowance pays the count back (never below zero), and a body
    /// whose count passes this bound is refused with
    /// [`ExcessiveChunkOverhead`](crate::ErrorKind::ExcessiveChunkOverhead)
    /// (`400 Bad Request`). So the framing of a body stays within this
    /// bound plus 18 bytes per data byte, however small its chunks: tiny
    /// chunks cannot multiply the work per data byte without limit.
    /// Default: 16 KiB. `usize::MAX` turns the bound off.
    pub max_chunk_overhead_bytes: usize,
    /// Longest trailer section of a chunked body in bytes. Default: 16 KiB.
    pub max_trailer_bytes: usize,
    /// Most interim (1xx) responses accepted before a final response.
    /// Default: 32.
    pub max_interim_responses: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_target_bytes: 8 * 1024,
            max_head_bytes: 64 * 1024,
            max_fields: 128,
            max_chunk_line_bytes: 4 * 1024,
            max_chunk_extension_bytes: 16 * 1024,
            max_chunk_overhead_bytes: 16 * 1024,
            max_trailer_bytes: 16 * 1024,
            max_interim_responses: 32,
        }
    }
}
