//! Chunk extensions: the `;name=value` list after a chunk size (RFC 9112
//! section 7.1.1), read by the decoders on request and written by the
//! encoders.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;

use crate::grammar::{is_text, run, token_end};

/// The chunk extensions of one chunk: everything on its chunk-size line
/// between the size and the line end, as it was received or is to be sent
/// (`;name=value`, `;flag`, `; q="quoted"`, whitespace around `;` and `=`
/// included).
///
/// A decoder hands them out as [`Event::ChunkExtensions`](crate::Event::ChunkExtensions)
/// when asked to ([`Decoder::set_chunk_extensions`](crate::Decoder::set_chunk_extensions),
/// [`Config::chunk_extensions`](crate::Config::chunk_extensions)), as a
/// slice of the read buffer; an encoder writes them on the next chunk it
/// sends ([`Encoder::send_chunk_extensions`](crate::encode::Encoder::send_chunk_extensions)).
/// The bytes always follow the grammar
/// `*( BWS ";" BWS ext-name [ BWS "=" BWS ( token / quoted-string ) ] )`,
/// so they can never end the line or hold a control character.
///
/// ```
/// use h1proto::ChunkExtensions;
///
/// let ext = ChunkExtensions::new(r#";sig=abc123; note="a \"quoted\" text";last"#).unwrap();
/// let items: Vec<_> = ext
///     .iter()
///     .map(|e| (e.name(), e.value().map(|v| v.into_owned())))
///     .collect();
/// assert_eq!(
///     items,
///     [
///         ("sig", Some(b"abc123".to_vec())),
///         ("note", Some(br#"a "quoted" text"#.to_vec())),
///         ("last", None),
///     ]
/// );
/// assert!(ChunkExtensions::new(";a=b\r\n0").is_none());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ChunkExtensions(Bytes);

impl ChunkExtensions {
    /// Chunk extensions from their text, if it follows the grammar. Empty
    /// text is no extension at all.
    pub fn new(bytes: impl Into<Bytes>) -> Option<Self> {
        let bytes = bytes.into();
        validate(&bytes).then_some(ChunkExtensions(bytes))
    }

    /// The text, as received or to be sent.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text, without a copy.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }

    /// `true` for no extension at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The extensions one by one, in order.
    pub fn iter(&self) -> impl Iterator<Item = ChunkExtension<'_>> + Clone + fmt::Debug + '_ {
        self.into_iter()
    }

    /// Bytes already checked against the grammar.
    pub(crate) fn from_validated(bytes: Bytes) -> Self {
        ChunkExtensions(bytes)
    }
}

impl fmt::Debug for ChunkExtensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkExtensions({:?})", String::from_utf8_lossy(&self.0))
    }
}

impl AsRef<[u8]> for ChunkExtensions {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a ChunkExtensions {
    type Item = ChunkExtension<'a>;
    type IntoIter = ChunkExtensionIter<'a>;

    fn into_iter(self) -> ChunkExtensionIter<'a> {
        let text = &self.0;
        ChunkExtensionIter { text, at: 0 }
    }
}

/// One chunk extension: a name, with or without a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkExtension<'a> {
    name: &'a str,
    value: Option<&'a [u8]>,
}

impl<'a> ChunkExtension<'a> {
    /// The name (a token), as written.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The value: a token as written, or the content of a quoted-string
    /// with its quoted-pairs (`\"`) resolved; `None` for a name alone.
    pub fn value(&self) -> Option<Cow<'a, [u8]>> {
        let raw = self.value?;
        let Some(inner) = raw.strip_prefix(b"\"").and_then(|q| q.strip_suffix(b"\"")) else {
            return Some(Cow::Borrowed(raw));
        };
        if !inner.contains(&b'\\') {
            return Some(Cow::Borrowed(inner));
        }
        // A quoted-pair stands for the byte after its backslash: the
        // backslash that opens one is dropped, the byte after it kept.
        let mut in_pair = false;
        let out = inner.iter().copied().filter(|&b| {
            in_pair = !in_pair && b == b'\\';
            !in_pair
        });
        Some(Cow::Owned(out.collect()))
    }

    /// The value as written: a token, or a quoted-string with its quotes.
    pub fn raw_value(&self) -> Option<&'a [u8]> {
        self.value
    }
}

/// The extensions of a [`ChunkExtensions`], in order.
#[derive(Debug, Clone)]
pub struct ChunkExtensionIter<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Iterator for ChunkExtensionIter<'a> {
    type Item = ChunkExtension<'a>;

    fn next(&mut self) -> Option<ChunkExtension<'a>> {
        let (item, at) = parse_at(self.text, self.at)?;
        self.at = at;
        Some(item)
    }
}

/// `true` when `text` follows the chunk-ext grammar: its extensions, read
/// one by one, reach its end.
pub(crate) fn validate(text: &[u8]) -> bool {
    let mut iter = ChunkExtensionIter { text, at: 0 };
    iter.by_ref().for_each(drop);
    iter.at == text.len()
}

/// The extension starting at `i` of `s` (before its end), and where the
/// next one starts; `None` at the end of `s` or where the grammar is not
/// followed.
fn parse_at(s: &[u8], i: usize) -> Option<(ChunkExtension<'_>, usize)> {
    let bws = |i| run(s, i, s.len(), |b| b == b' ' || b == b'\t');
    let token = |i| token_end(s, i, s.len());
    let i = bws(i);
    if s.get(i) != Some(&b';') {
        return None;
    }
    let name_start = bws(i + 1);
    let name_end = token(name_start);
    // A token: one byte or more, all ASCII.
    let name = std::str::from_utf8(&s[name_start..name_end]).ok();
    let name = name.filter(|name| !name.is_empty())?;
    let i = bws(name_end);
    if s.get(i) != Some(&b'=') {
        // Whitespace only counts as BWS when something follows it.
        return Some((ChunkExtension { name, value: None }, name_end));
    }
    let value_start = bws(i + 1);
    let value_end = if s.get(value_start) == Some(&b'"') {
        quoted_string_end(s, value_start + 1)?
    } else {
        token(value_start)
    };
    if value_end == value_start {
        return None;
    }
    let value = Some(&s[value_start..value_end]);
    Some((ChunkExtension { name, value }, value_end))
}

/// The index after the closing quote of a quoted-string whose content starts
/// at `i`, or `None` if it is not closed on this line or holds a control.
fn quoted_string_end(s: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match *s.get(i)? {
            b'"' => return Some(i + 1),
            // A quoted-pair: a backslash, then any text byte.
            b'\\' if s.get(i + 1).is_some_and(|&b| is_text(b)) => i += 2,
            b if b != b'\\' && is_text(b) => i += 1,
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar() {
        for good in [
            &b""[..],
            b";sig=abc123",
            b" ;a = b",
            b"\t; z",
            b";flag;q=\"semi;colon\"",
            b";a=\"esc\\\"aped\"",
            b";a;b;c=d",
            b";a=\"\"",
        ] {
            assert!(validate(good), "{:?}", String::from_utf8_lossy(good));
        }
        for bad in [
            &b";"[..],
            b";a=",
            b";a=\"open",
            b";a b",
            b";a= ",
            b";a ",
            b";=b",
            b";a=\"x\x01\"",
            b";a=b c",
            b"a",
            b";a\r\n",
            b";a=\"\\\n\"",
        ] {
            assert!(!validate(bad), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn items_and_values() {
        let ext = ChunkExtensions::new(&b" ; a = \"x\\\\y\\\"z\" ;b; c=tok"[..]).unwrap();
        let items: Vec<_> = ext.iter().collect();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].name(), "a");
        assert_eq!(items[0].raw_value(), Some(&b"\"x\\\\y\\\"z\""[..]));
        assert_eq!(items[0].value().as_deref(), Some(&b"x\\y\"z"[..]));
        assert_eq!((items[1].name(), items[1].value()), ("b", None));
        assert_eq!(items[2].value().as_deref(), Some(&b"tok"[..]));
        assert!(ChunkExtensions::new("").unwrap().iter().next().is_none());
    }
}
