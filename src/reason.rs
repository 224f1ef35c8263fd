//! The reason phrase of a status line, carried as a response extension.

use std::fmt;

use bytes::Bytes;

use crate::error::UsageError;
use crate::head::chars::is_text;

/// The reason phrase of a status line (`Not Found` in `HTTP/1.1 404 Not
/// Found`), as a response extension.
///
/// `http::Response` has no place for a reason phrase, so it travels in the
/// response's extensions. The response decoder inserts the phrase it read;
/// the response encoder writes the phrase it finds, and the canonical phrase
/// of the status code when there is none.
///
/// The bytes are always valid: HTAB, SP, VCHAR or obs-text (RFC 9112
/// section 4), possibly empty.
///
/// ```
/// use h1proto::ReasonPhrase;
///
/// let mut res = http::Response::new(());
/// res.extensions_mut().insert(ReasonPhrase::new("Everything Fine").unwrap());
/// assert!(ReasonPhrase::new("bad\r\nline").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ReasonPhrase(Bytes);

impl ReasonPhrase {
    /// A reason phrase, if every byte is HTAB, SP, VCHAR or obs-text;
    /// otherwise [`UsageError::InvalidHead`].
    pub fn new(phrase: impl Into<Bytes>) -> Result<Self, UsageError> {
        let phrase = phrase.into();
        if phrase.iter().all(|&b| is_text(b)) {
            Ok(ReasonPhrase(phrase))
        } else {
            Err(UsageError::InvalidHead)
        }
    }

    /// A reason phrase from bytes the caller has already checked.
    #[allow(dead_code)]
    pub(crate) fn from_checked(phrase: Bytes) -> Self {
        debug_assert!(phrase.iter().all(|&b| is_text(b)));
        ReasonPhrase(phrase)
    }

    /// The phrase's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The phrase, if it is UTF-8 (obs-text may make it not).
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The phrase's bytes, without a copy.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl AsRef<[u8]> for ReasonPhrase {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for ReasonPhrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReasonPhrase({:?})", String::from_utf8_lossy(&self.0))
    }
}
