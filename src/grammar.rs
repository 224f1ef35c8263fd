//! The grammar of RFC 9110 and RFC 9112 that every other module shares:
//! byte classes (as lookup tables), optional whitespace, lists, decimal
//! and hex numbers, and the trailer policy. It imports nothing of the
//! crate, so the head parser, the framing rules, the chunked decoder and
//! the encoders all depend on it and never on each other for these.

use http::HeaderName;

macro_rules! table {
    ($f:ident) => {{
        let mut t = [$f(0); 256];
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
    reg_name_char(b) || matches!(b, b'%' | b':' | b'@' | b'/' | b'?' | b'[' | b']')
}

/// reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ); also field-value bytes.
const fn text_char(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

/// reg-name bytes of RFC 3986 but `%`: unreserved and sub-delims.
const fn reg_name_char(b: u8) -> bool {
    matches!(b,
        b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' |
        b'-' | b'.' | b'_' | b'~' |
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

static TCHAR: [bool; 256] = table!(tchar);
static REG_NAME: [bool; 256] = table!(reg_name_char);
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

/// A valid `Host` field value (RFC 9112 section 3.2, RFC 9110 section
/// 7.2): `uri-host [ ":" port ]` of RFC 3986, where `uri-host` is an
/// IP-literal in brackets, or a reg-name (an IPv4 address is one) of
/// unreserved bytes, sub-delims and pct-encoded triplets, and `port` is
/// `*DIGIT`. The host must not be empty: the target URI a server builds
/// from an empty `Host` is an `http` URI with an empty host, which RFC
/// 9110 section 4.2.1 tells a recipient to reject.
#[inline(never)]
pub(crate) fn is_host(value: &[u8]) -> bool {
    let host_end = match value.first() {
        Some(b'[') => match memchr::memchr(b']', value) {
            Some(close) if is_ip_literal(&value[1..close]) => close + 1,
            _ => return false,
        },
        _ => {
            // To the first byte that is not unreserved or a sub-delim,
            // eight table lookups at a time; a `%` there needs two hex
            // digits after it, and the run goes on.
            let mut i = 0;
            loop {
                i = table_end(value, i, value.len(), &REG_NAME);
                match value.get(i..i + 3) {
                    Some([b'%', h, l]) if HEX[*h as usize] < 16 && HEX[*l as usize] < 16 => i += 3,
                    _ => break i,
                }
            }
        }
    };
    match &value[host_end..] {
        _ if host_end == 0 => false,
        [] => true,
        [b':', port @ ..] => port.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// The inside of an IP-literal's brackets: an IPv6 address (RFC 4291
/// text, as RFC 3986 takes it, without a zone), or an IPvFuture (`v`
/// 1*HEXDIG `.` 1*( unreserved / sub-delims / `:` )).
#[cold]
fn is_ip_literal(inside: &[u8]) -> bool {
    match inside {
        [b'v' | b'V', rest @ ..] => {
            let Some(dot) = memchr::memchr(b'.', rest) else {
                return false;
            };
            let (version, address) = (&rest[..dot], &rest[dot + 1..]);
            !version.is_empty()
                && version.iter().all(u8::is_ascii_hexdigit)
                && !address.is_empty()
                && address.iter().all(|&b| b == b':' || REG_NAME[b as usize])
        }
        _ => {
            std::str::from_utf8(inside).is_ok_and(|text| text.parse::<std::net::Ipv6Addr>().is_ok())
        }
    }
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

/// `true` when `name`, in any case, is `lower`, a name in lower case:
/// compared eight bytes at a time (the shorter names in one word, loaded
/// overlapping).
#[inline(always)]
pub(crate) fn names_match(name: &[u8], lower: &[u8]) -> bool {
    let n = name.len();
    if n != lower.len() {
        return false;
    }
    let word = |b: &[u8]| b.first_chunk().map_or(0, |w| u64::from_le_bytes(*w));
    let last = |b: &[u8]| b.last_chunk().map_or(0, |w| u64::from_le_bytes(*w));
    match n {
        0 => true,
        1..=3 => {
            let three = |b: &[u8]| u64::from_le_bytes([b[0], b[n / 2], b[n - 1], 0, 0, 0, 0, 0]);
            lower_word(three(name)) == three(lower)
        }
        4..=8 => {
            let two = |b: &[u8]| {
                let half = |w: Option<&[u8; 4]>| w.map_or(0, |w| u64::from(u32::from_le_bytes(*w)));
                half(b.first_chunk()) | half(b.last_chunk()) << 32
            };
            lower_word(two(name)) == two(lower)
        }
        _ => {
            let (mut a, mut b) = (name, lower);
            while a.len() > 8 {
                if lower_word(word(a)) != word(b) {
                    return false;
                }
                (a, b) = (&a[8..], &b[8..]);
            }
            lower_word(last(name)) == last(lower)
        }
    }
}

/// Each byte of `x` as `u8::to_ascii_lowercase` makes it.
#[inline(always)]
fn lower_word(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // With the high bits cleared, adding to a byte carries into its high
    // bit alone: set from `A` on, and past `Z`.
    let low = x & !HIGH;
    let from_a = low + 0x3f3f_3f3f_3f3f_3f3f;
    let past_z = low + 0x2525_2525_2525_2525;
    let upper = from_a & !past_z & !x & HIGH;
    x | upper >> 2
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
    let n = digits.iter().try_fold(0u64, |n, &d| {
        let d = d.is_ascii_digit().then(|| u64::from(d - b'0'))?;
        n.checked_mul(10)?.checked_add(d)
    });
    n.filter(|_| !digits.is_empty())
}

const fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0xff,
    }
}

/// The value of each HEXDIG; 16 and above for other bytes.
pub(crate) static HEX: [u8; 256] = table!(hex_value);

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
    matches!(
        name.as_str(),
        "content-length"
            | "transfer-encoding"
            | "host"
            | "trailer"
            | "connection"
            | "te"
            | "upgrade"
            | "expect"
            | "content-type"
            | "content-encoding"
            | "content-range"
            | "authorization"
            | "proxy-authorization"
            | "set-cookie"
            | "cookie"
            | "keep-alive"
            | "proxy-connection"
    )
}

/// Where the run of bytes of `head[from..upto]` that `keep` takes ends.
#[inline(always)]
pub(crate) fn run(head: &[u8], from: usize, upto: usize, keep: impl Fn(u8) -> bool) -> usize {
    head[from..upto]
        .iter()
        .position(|&b| !keep(b))
        .map_or(upto, |n| from + n)
}

/// Where the run of `tchar` from `from` ends (a method, a field name, a
/// chunk extension's name), eight bytes at a time as [`scan`] reads.
#[inline]
pub(crate) fn token_end(bytes: &[u8], from: usize, upto: usize) -> usize {
    scan(bytes, from, upto, maybe_not_tchar, is_tchar)
}

/// Where the run of request-target bytes from `from` ends, as
/// [`table_end`] reads (the class has no word test: a target's `=`, `_`
/// and `&` are too common to look at alone).
#[inline]
pub(crate) fn target_end(head: &[u8], from: usize, upto: usize) -> usize {
    table_end(head, from, upto, &TARGET)
}

/// Where the run of bytes that `table` takes from `from` ends: eight at a
/// time, their entries combined without a branch per byte, then byte by
/// byte from the first eight that are not all taken.
#[inline(always)]
fn table_end(bytes: &[u8], mut from: usize, upto: usize, table: &[bool; 256]) -> usize {
    while let Some(word) = bytes.get(from..from + 8).filter(|_| from + 8 <= upto) {
        if !word.iter().fold(true, |all, &b| all & table[b as usize]) {
            break;
        }
        from += 8;
    }
    run(bytes, from, upto, |b| table[b as usize])
}

/// Where the run of HTAB, SP, VCHAR and obs-text from `from` ends (a
/// field value, a reason phrase), eight bytes at a time as [`scan`] reads.
#[inline]
pub(crate) fn text_end(bytes: &[u8], from: usize, upto: usize) -> usize {
    scan(bytes, from, upto, maybe_not_text, is_text)
}

/// Where the run of bytes of `bytes[from..upto]` that `keep` takes ends,
/// read a word of eight bytes at a time: `suspects` flags (the high bit
/// of a byte) every byte of a word that `keep` may refuse, and a few it
/// takes besides; a word with none is taken whole, and the first flagged
/// byte is looked at alone, the run going on after it when `keep` takes
/// it. Fewer than eight bytes before `upto` are read as the last word of
/// `bytes[..upto]`, its bytes before `from` (taken already) unflagged;
/// only a run shorter than a word goes byte by byte. The same answer as
/// [`run`], in fewer instructions per byte.
#[inline(always)]
fn scan(
    bytes: &[u8],
    mut from: usize,
    upto: usize,
    suspects: impl Fn(u64) -> u64,
    keep: impl Fn(u8) -> bool,
) -> usize {
    let bytes = &bytes[..upto];
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
    while let Some(w) = bytes.get(from..from + 8) {
        let flags = suspects(word(w));
        if flags == 0 {
            from += 8;
            continue;
        }
        let at = from + (flags.trailing_zeros() / 8) as usize;
        if !keep(bytes[at]) {
            return at;
        }
        from = at + 1;
    }
    if from == upto || upto < 8 {
        return run(bytes, from, upto, keep);
    }
    // The last word, overlapping what was taken: `upto - from` is 1 to 7.
    let last = upto - 8;
    let mut flags = suspects(word(&bytes[last..])) & (!0 << (8 * (from - last)));
    while flags != 0 {
        let at = last + (flags.trailing_zeros() / 8) as usize;
        if !keep(bytes[at]) {
            return at;
        }
        flags &= flags - 1;
    }
    upto
}

/// Each byte of a word: `b` repeated.
const fn bytes(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}
const HIGH: u64 = bytes(0x80);
const LOW7: u64 = bytes(0x7f);

/// The high bit of each byte of `v` (high bits clear) that lies within
/// `lo..=hi` (both below 0x80). Per byte, `v + 0x80 - lo` has its high bit
/// set exactly when `v >= lo`, `v + 0x7f - hi` exactly when `v > hi`;
/// neither sum passes 0xFF, so no carry crosses a byte.
#[inline(always)]
const fn within(v: u64, lo: u8, hi: u8) -> u64 {
    (v + bytes(0x80 - lo)) & !(v + bytes(0x7f - hi)) & HIGH
}

/// The high bit of each byte of `w` that is not an ASCII digit, letter
/// or `-`: every byte that is not `tchar`, and the rarer `tchar`
/// (`!#$%&'*+.^_`|~`) besides. (`v | 0x20` folds `A-Z` onto `a-z`.)
#[inline(always)]
const fn maybe_not_tchar(w: u64) -> u64 {
    let v = w & LOW7;
    let kept = within(v, b'0', b'9') | within(v | bytes(0x20), b'a', b'z') | within(v, b'-', b'-');
    (!kept | w) & HIGH
}

/// The high bit of each byte of `w` whose low seven bits are below SP or
/// a DEL: every byte that is not text (below SP or a DEL), and besides
/// them HTAB and the obs-text bytes 0x80 to 0x9F and 0xFF, which are. No
/// carry or borrow crosses a byte, so the flags are exact per byte.
///
/// Per byte, with `v` its low seven bits: `v + 1` is at most 0x80, and
/// it is at most 0x20 or exactly 0x80 (DEL) when the byte is flagged;
/// with the high bit set, taking 0x21 leaves the high bit clear exactly
/// then.
#[inline(always)]
const fn maybe_not_text(w: u64) -> u64 {
    let u = (((w & LOW7) + bytes(0x01)) | HIGH) - bytes(0x21);
    !u & HIGH
}

#[cfg(test)]
mod tests {

    #[test]
    fn names_match_as_ascii_case_folding_does() {
        let alphabet = b"aAzZ@[`{^~_-09\x7f\x80\xc1\xe1\xff";
        let mut seed = 1u32;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as usize % n
        };
        for _ in 0..20_000 {
            let len = next(20);
            let a: Vec<u8> = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let mut b = a.to_ascii_lowercase();
            if len > 0 && next(2) == 0 {
                let at = next(len);
                b[at] = alphabet[next(alphabet.len())].to_ascii_lowercase();
            }
            assert_eq!(
                names_match(&a, &b),
                a.eq_ignore_ascii_case(&b),
                "{a:?} {b:?}"
            );
        }
        assert!(!names_match(b"A^", b"a~"));
        assert!(!names_match(b"Content-Type", b"content-typf"));
        assert!(names_match(b"Accept-Ranges", b"accept-ranges"));
    }

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
    fn host_values_are_uri_host_and_port() {
        for valid in [
            "example.com",
            "example.com:80",
            "example.com:",
            "[::1]:80",
            "[::1]",
            "[2001:db8::7]",
            "[::ffff:192.0.2.1]:8080",
            "[v1.fe80::a+en1]",
            "ex%41mple",
            "a-b_c~d",
            "127.0.0.1:8080",
            "!$&'()*+,;=",
            "EXAMPLE.COM",
        ] {
            assert!(is_host(valid.as_bytes()), "{valid}");
        }
        for invalid in [
            &b"###"[..],
            b"exa mple.com",
            b"ex@mple",
            b"a/b",
            b"a?b",
            b"a\\b",
            b"caf\xc3\xa9.example",
            b"\xff",
            b"",
            b":80",
            b"example.com:8x",
            b"example.com:80:80",
            b"ex%4",
            b"ex%zzmple",
            b"%",
            b"[::1",
            b"[::1]x",
            b"[::1]:80x",
            b"[]",
            b"[not-v6]",
            b"[::1%eth0]",
            b"[v1.]",
            b"[v.a]",
            b"[vz.a]",
            b"a\tb",
            b"a\"b",
            b"a<b>",
            b"a[b]",
        ] {
            assert!(!is_host(invalid), "{}", invalid.escape_ascii());
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
        for b in 0..=255u8 {
            let expected = (b as char).to_digit(16).map(u64::from);
            let d = HEX[usize::from(b)];
            assert_eq!((d < 16).then_some(u64::from(d)), expected, "byte {b:#x}");
        }
    }

    #[test]
    fn ows_and_lists() {
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        let elements: Vec<&[u8]> = list_elements(b" , a,b ,, \tc d ,").collect();
        assert_eq!(elements, [&b"a"[..], b"b", b"c d"]);
        assert!(is_token(b"chunked") && !is_token(b"") && !is_token(b"a b"));
    }

    /// Each scanner with its word test and the class it reads.
    type Scanner = (
        fn(&[u8], usize, usize) -> usize,
        Option<fn(u64) -> u64>,
        fn(u8) -> bool,
    );
    fn reg_name_end(bytes: &[u8], from: usize, upto: usize) -> usize {
        table_end(bytes, from, upto, &REG_NAME)
    }

    fn is_reg_name(b: u8) -> bool {
        REG_NAME[b as usize]
    }

    const SCANNERS: [Scanner; 4] = [
        (token_end, Some(maybe_not_tchar), is_tchar),
        (reg_name_end, None, is_reg_name),
        (target_end, None, is_target_char),
        (text_end, Some(maybe_not_text), is_text),
    ];

    #[test]
    fn a_run_ends_at_the_first_byte_out_of_its_class() {
        for (end_of, _, keep) in SCANNERS {
            // 43: a run that ends in a partial word.
            for len in [40, 43] {
                for b in 0..=255u8 {
                    for at in 0..len {
                        let mut bytes = vec![b'a'; len];
                        bytes[at] = b;
                        let end = if keep(b) { len } else { at };
                        assert_eq!(end_of(&bytes, 0, len), end, "byte {b:#x} at {at}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_word_test_flags_every_byte_out_of_its_class() {
        for (_, suspects, keep) in SCANNERS {
            let Some(suspects) = suspects else { continue };
            for b in 0..=255u8 {
                for at in 0..8 {
                    for fill in [b'a', b'0', b'-', b'Z'] {
                        let mut w = [fill; 8];
                        w[at] = b;
                        let flags = suspects(u64::from_le_bytes(w));
                        // Exact per byte: only the byte changed may be flagged.
                        assert_eq!(flags & !(0x80 << (8 * at)), 0, "byte {b:#x} at {at}");
                        if !keep(b) {
                            assert_ne!(flags, 0, "byte {b:#x} at {at}");
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The scanners that read words give the answer of the plain one
        /// that reads byte by byte, on any bytes from anywhere to any
        /// bound.
        #[test]
        fn a_word_at_a_time_is_byte_by_byte(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::any::<u8>(),
                    proptest::sample::select(&b"aZ09-_.~!=:/ \t\r\n\x7f\x80\xff"[..]),
                    (b'a'..=b'z'),
                ],
                0..80,
            ),
            from in proptest::prelude::any::<proptest::sample::Index>(),
            upto in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let upto = upto.index(bytes.len() + 1);
            let from = from.index(upto + 1);
            for (end_of, _, keep) in SCANNERS {
                proptest::prop_assert_eq!(end_of(&bytes, from, upto), run(&bytes, from, upto, keep));
            }
        }
    }
}
