//! The reason phrase of a status line, kept when it is not the canonical one.

use bytes::Bytes;

/// The reason phrase a response carried, as a response extension.
///
/// `http::Response` has no place for the reason phrase; the decoder inserts
/// this extension when the phrase differs from the canonical reason of the
/// status code (so the common case costs nothing), and the encoder writes it
/// instead of the canonical reason when present.
///
/// The bytes are always valid: HTAB, SP, VCHAR or obs-text (RFC 9112
/// section 4), possibly empty.
///
/// ```
/// use h1proto::ReasonPhrase;
///
/// let mut res = http::Response::new(());
/// res.extensions_mut().insert(ReasonPhrase::new("Everything Fine").unwrap());
/// assert!(ReasonPhrase::new("bad\r\nline").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReasonPhrase(Bytes);

impl ReasonPhrase {
    /// A reason phrase from bytes, if they are HTAB, SP, VCHAR or obs-text.
    pub fn new(bytes: impl Into<Bytes>) -> Option<Self> {
        let bytes = bytes.into();
        bytes
            .iter()
            .all(|&b| crate::grammar::is_text(b))
            .then_some(ReasonPhrase(bytes))
    }

    /// The bytes of the phrase.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The phrase, if it is UTF-8 (obs-text may make it not).
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The bytes of the phrase, without a copy.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }

    pub(crate) fn from_validated(bytes: Bytes) -> Self {
        ReasonPhrase(bytes)
    }
}

impl AsRef<[u8]> for ReasonPhrase {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
