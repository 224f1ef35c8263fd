//! The grammar of RFC 9110 and RFC 9112 that every other module shares:
//! byte classes (as lookup tables), optional whitespace, lists, decimal
//! and hex numbers, and the trailer policy. It imports nothing of the
//! crate, so the head parser, the framing rules, the chunked decoder and
//! the encoders all depend on it and never on each other for these.

use http::HeaderName;

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

/// `s` without its leading and trailing OWS.
pub(crate) fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// The non-empty elements of a comma-separated list, trimmed of OWS
/// (RFC 9110 section 5.6.1).
pub(crate) fn list_elements(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim_ows)
        .filter(|e| !e.is_empty())
}

/// `token` of RFC 9110 section 5.6.2: one or more `tchar`.
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| is_tchar(b))
}

/// Parses 1*DIGIT into a u64, refusing signs, spaces and overflow.
pub(crate) fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}

/// The value of the HEXDIG `b`.
#[inline]
pub(crate) fn hex_digit(b: u8) -> Option<u64> {
    char::from(b).to_digit(16).map(u64::from)
}

/// Formats `n` in decimal into `buf` and returns the digits.
pub(crate) fn write_decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Fields that may not appear in a trailer section: they would change the
/// framing, the routing or the connection after the fact (RFC 9110 section
/// 6.5.1). Decoders refuse a trailer section carrying one, and encoders
/// refuse to send one.
pub(crate) fn forbidden_in_trailers(name: &HeaderName) -> bool {
    use http::header::*;
    [
        CONTENT_LENGTH,
        TRANSFER_ENCODING,
        HOST,
        TRAILER,
        CONNECTION,
        TE,
        UPGRADE,
        EXPECT,
        CONTENT_TYPE,
        CONTENT_ENCODING,
        CONTENT_RANGE,
        AUTHORIZATION,
        PROXY_AUTHORIZATION,
        SET_COOKIE,
        COOKIE,
    ]
    .contains(name)
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

/// Where the run of bytes of `head[from..upto]` that `keep` takes ends.
#[inline(always)]
pub(crate) fn run(head: &[u8], from: usize, upto: usize, keep: impl Fn(u8) -> bool) -> usize {
    head[from..upto]
        .iter()
        .position(|&b| !keep(b))
        .map_or(upto, |n| from + n)
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

    #[test]
    fn numbers_both_ways() {
        for n in [0u64, 1, 9, 10, 15, 16, 1024, u64::MAX] {
            let mut d = [0u8; 20];
            let digits = write_decimal(&mut d, n);
            assert_eq!(digits, n.to_string().as_bytes());
            assert_eq!(parse_decimal(digits), Some(n));
        }
        for bad in [
            &b""[..],
            b"+1",
            b"-1",
            b" 1",
            b"1 ",
            b"0x1",
            b"18446744073709551616",
        ] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ows_and_lists() {
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        let elements: Vec<&[u8]> = list_elements(b" , a,b ,, \tc d ,").collect();
        assert_eq!(elements, [&b"a"[..], b"b", b"c d"]);
        assert!(is_token(b"chunked") && !is_token(b"") && !is_token(b"a b"));
    }
}
