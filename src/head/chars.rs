//! Byte classes of RFC 9110 / RFC 9112 as lookup tables.

macro_rules! table {
    ($f:ident) => {{
        let mut t = [false; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = $f(i as u8);
            i += 1;
        }
        t
    }};
}

const fn tchar(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' |
        b'^' | b'_' | b'`' | b'|' | b'~' | b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z')
}

/// Bytes a request-target may hold: RFC 3986 unreserved, sub-delims, `%`,
/// `:`, `@`, `/`, `?`. Controls, space, non-ASCII, `#` and the characters
/// RFC 3986 leaves out (`"<>\^{|}` and backquote) are refused.
const fn target_char(b: u8) -> bool {
    matches!(b,
        b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' |
        b'-' | b'.' | b'_' | b'~' |
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' |
        b'%' | b':' | b'@' | b'/' | b'?' | b'[' | b']')
}

/// reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ); also field-value bytes.
const fn text_char(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

static TCHAR: [bool; 256] = table!(tchar);
static TARGET: [bool; 256] = table!(target_char);
static TEXT: [bool; 256] = table!(text_char);

/// `tchar` of RFC 9110 section 5.6.2.
#[inline]
pub(crate) fn is_tchar(b: u8) -> bool {
    TCHAR[b as usize]
}

/// A byte allowed in a request-target.
#[inline]
pub(crate) fn is_target_char(b: u8) -> bool {
    TARGET[b as usize]
}

/// HTAB, SP, VCHAR or obs-text.
#[inline]
pub(crate) fn is_text(b: u8) -> bool {
    TEXT[b as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tchar_is_exactly_the_rfc_set() {
        let rfc = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        for b in 0..=255u8 {
            assert_eq!(is_tchar(b), rfc.contains(&b), "byte {b:#x}");
        }
    }

    #[test]
    fn text_refuses_controls_but_tab() {
        for b in 0..=255u8 {
            let expected = b == b'\t' || (b >= 0x20 && b != 0x7f);
            assert_eq!(is_text(b), expected, "byte {b:#x}");
        }
    }

    #[test]
    fn target_refuses_space_controls_fragment_and_non_ascii() {
        for b in [
            b' ', b'\t', b'\r', b'\n', 0, 0x7f, b'#', b'"', b'<', b'>', b'{', b'}', b'|', b'\\',
            b'^', b'`', 0x80, 0xff,
        ] {
            assert!(!is_target_char(b), "byte {b:#x}");
        }
        for b in b"/a-Z_9.~!$&'()*+,;=%:@?[]" {
            assert!(is_target_char(*b), "byte {b:#x}");
        }
    }
}
