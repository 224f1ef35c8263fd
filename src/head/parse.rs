//! Turning the lines of a complete head into `http` types.
//!
//! Field values are `Bytes` slices of the frozen head: no copy. Values are
//! validated by `HeaderValue::from_maybe_shared` (one pass: HTAB, SP, VCHAR,
//! obs-text), names by `HeaderName::from_bytes` (tchar only). A value
//! that repeats, byte for byte, the one kept with its name in the name
//! cache is a clone of that one instead ([`NameCache::known_value`]).
//!
//! Every head is parsed first with [`Strict`]: no switch is consulted and
//! errors are bare `ErrorKind`s, so a valid message runs the strict
//! reading's code alone. Only a head that this refuses is parsed again
//! with [`Lenient`], which applies the decoder's leniency switches and
//! names, in its error, the switch that would accept the input.

use bytes::{Bytes, BytesMut};
use http::header::{Entry, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Uri, Version};
use memchr::memchr;

use super::early::EarlyCheck;
use super::names::NameCache;
use crate::error::{Error, ErrorKind};
use crate::framing::{FieldRole as Role, Seen};
use crate::grammar::{is_target_char, is_tchar, is_text};
use crate::grammar::{ows_bounds, trim_ows};
use crate::leniency::{Rules, Switch};

/// What the parser does with input the strict reading refuses.
pub(crate) trait Tolerance: Copy {
    /// The error it reports.
    type Error: From<ErrorKind>;
    /// `false` for [`Strict`]: every path that could keep a refused line
    /// is compiled out.
    const LENIENT: bool;
    fn bare_lf(self) -> bool;
    fn no_space_after_status(self) -> bool;
    fn space_before_colon(self) -> bool;
    fn skip_invalid_fields(self) -> bool;
    /// The section is a head, not a trailer section.
    fn in_head(self) -> bool;
    /// The name of field line `line`, its role and the offset of its colon
    /// (as [`NameCache::name_of`]).
    fn name_of(
        self,
        names: &mut NameCache,
        line: &[u8],
    ) -> Result<Option<(HeaderName, Role, usize)>, ()>;
    /// The refusal of `kind`, naming `switch` when it exists on this side.
    fn refuse(self, kind: ErrorKind, switch: Option<Switch>) -> Self::Error;
    /// `error`, found in the line `start..end` of `section`: placed there,
    /// with the line's field name. The strict reading's errors are bare
    /// kinds, placed by the lenient parse that follows every refusal.
    fn at(self, error: Self::Error, section: &[u8], start: usize, end: usize) -> Self::Error;
}

/// The strict reading: no switch, no switch named.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strict;

impl Tolerance for Strict {
    type Error = ErrorKind;
    const LENIENT: bool = false;
    fn bare_lf(self) -> bool {
        false
    }
    fn no_space_after_status(self) -> bool {
        false
    }
    fn space_before_colon(self) -> bool {
        false
    }
    fn skip_invalid_fields(self) -> bool {
        false
    }
    fn in_head(self) -> bool {
        false
    }
    #[inline]
    fn name_of(
        self,
        names: &mut NameCache,
        line: &[u8],
    ) -> Result<Option<(HeaderName, Role, usize)>, ()> {
        names.name_of(line)
    }
    fn refuse(self, kind: ErrorKind, _: Option<Switch>) -> ErrorKind {
        kind
    }
    #[inline(always)]
    fn at(self, error: ErrorKind, _: &[u8], _: usize, _: usize) -> ErrorKind {
        error
    }
}

/// The decoder's switches, in a head (`in_head`) or a trailer section.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lenient<'a> {
    pub(crate) rules: &'a Rules,
    pub(crate) in_head: bool,
}

impl Tolerance for Lenient<'_> {
    type Error = Error;
    const LENIENT: bool = true;
    fn bare_lf(self) -> bool {
        self.rules.bare_lf
    }
    fn no_space_after_status(self) -> bool {
        self.rules.no_space_after_status
    }
    fn space_before_colon(self) -> bool {
        self.rules.space_before_colon
    }
    fn skip_invalid_fields(self) -> bool {
        self.rules.skip_invalid_fields
    }
    fn in_head(self) -> bool {
        self.in_head
    }
    /// Without the cache: the lenient parse is the rare one, and a second
    /// caller of the cache's lookup would cost the strict loop its
    /// inlining.
    fn name_of(
        self,
        _: &mut NameCache,
        line: &[u8],
    ) -> Result<Option<(HeaderName, Role, usize)>, ()> {
        let colon = memchr(b':', line).ok_or(())?;
        Ok(HeaderName::from_bytes(&line[..colon]).ok().map(|name| {
            let role = Role::of(&name);
            (name, role, colon)
        }))
    }
    fn refuse(self, kind: ErrorKind, switch: Option<Switch>) -> Error {
        Error::refused(kind, switch.and_then(|s| self.rules.hint(s)))
    }
    #[cold]
    #[inline(never)]
    fn at(self, error: Error, section: &[u8], start: usize, end: usize) -> Error {
        error.at(start as u64, field_name(&section[start..end]))
    }
}

/// The name of a field line, as received: the bytes before its colon
/// without the whitespace before the colon; `None` for a line that
/// continues another (obs-fold), has no colon or nothing before it.
#[cold]
fn field_name(line: &[u8]) -> Option<&[u8]> {
    if matches!(line.first(), None | Some(b' ' | b'\t')) {
        return None;
    }
    let name = line[..memchr(b':', line)?].trim_ascii_end();
    (!name.is_empty()).then_some(name)
}

/// The content of line `i` of a section, without its CRLF (or, with
/// `bare_lf`, its LF).
#[inline]
pub(crate) fn line<T: Tolerance>(
    section: &[u8],
    ends: &[usize],
    i: usize,
    t: T,
) -> Result<(usize, usize), T::Error> {
    let start = if i == 0 { 0 } else { ends[i - 1] + 1 };
    let lf = ends[i];
    if lf == start || section[lf - 1] != b'\r' {
        if !T::LENIENT {
            return Err(ErrorKind::BareLineFeed.into());
        }
        return bare_lf_line(section, start, lf, t);
    }
    Ok((start, lf - 1))
}

/// A line ended by LF alone: its content with `bare_lf`, else refused.
#[cold]
fn bare_lf_line<T: Tolerance>(
    section: &[u8],
    start: usize,
    lf: usize,
    t: T,
) -> Result<(usize, usize), T::Error> {
    if t.bare_lf() && lf > start {
        Ok((start, lf))
    } else {
        let error = t.refuse(ErrorKind::BareLineFeed, Some(Switch::BareLf));
        Err(t.at(error, section, start, lf))
    }
}

/// Checks the CRLF of the empty line that ends a section of `len` bytes.
#[inline]
pub(crate) fn check_final_crlf<T: Tolerance>(
    section: &[u8],
    len: usize,
    t: T,
) -> Result<(), T::Error> {
    if (len >= 2 && section[len - 2] == b'\r') || t.bare_lf() {
        Ok(())
    } else {
        // The empty line is the LF alone at the end.
        let error = t.refuse(ErrorKind::BareLineFeed, Some(Switch::BareLf));
        Err(t.at(error, section, len - 1, len - 1))
    }
}

/// Parses a request head (request line, field lines, final empty line);
/// `fold` says whether obs-fold is replaced by SP.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn request_head<T: Tolerance>(
    head: &Bytes,
    ends: &[usize],
    max_target: usize,
    fold: bool,
    t: T,
    names: &mut NameCache,
    map: &mut HeaderMap,
) -> Result<(RequestLine, Seen), T::Error> {
    if !T::LENIENT {
        check_final_crlf(head, head.len(), t)?;
    }
    let (start, end) = line(head, ends, 0, t)?;
    let line = request_line(head, start, end, max_target)?;
    let seen = fields(head, ends, 1, fold, t, names, map)?;
    if T::LENIENT {
        // Last, as the lines come: the lenient parse places its errors.
        check_final_crlf(head, head.len(), t)?;
    }
    Ok((line, seen))
}

/// [`request_head`] again, for a head the strict reading refused: with
/// the decoder's switches, into an emptied `map`.
#[cold]
#[inline(never)]
pub(crate) fn lenient_request_head(
    head: &Bytes,
    ends: &[usize],
    max_target: usize,
    rules: &Rules,
    names: &mut NameCache,
    map: &mut HeaderMap,
) -> Result<(RequestLine, Seen), Error> {
    map.clear();
    let t = Lenient {
        rules,
        in_head: true,
    };
    request_head(head, ends, max_target, rules.obs_fold, t, names, map)
        .map_err(|error| refusal(head, rules, max_target, error))
}

/// Parses a response head (status line, field lines, final empty line);
/// obs-fold is replaced by SP (RFC 9112 section 5.2: a user agent does).
#[inline(always)]
pub(crate) fn response_head<T: Tolerance>(
    head: &Bytes,
    ends: &[usize],
    t: T,
    names: &mut NameCache,
    map: &mut HeaderMap,
) -> Result<(StatusLine, Seen), T::Error> {
    if !T::LENIENT {
        check_final_crlf(head, head.len(), t)?;
    }
    let (start, end) = line(head, ends, 0, t)?;
    let line = status_line(head, start, end, t)?;
    let seen = fields(head, ends, 1, true, t, names, map)?;
    if T::LENIENT {
        // Last, as the lines come: the lenient parse places its errors.
        check_final_crlf(head, head.len(), t)?;
    }
    Ok((line, seen))
}

/// [`response_head`] again, for a head the strict reading refused: with
/// the decoder's switches, into an emptied `map`.
#[cold]
#[inline(never)]
pub(crate) fn lenient_response_head(
    head: &Bytes,
    ends: &[usize],
    rules: &Rules,
    names: &mut NameCache,
    map: &mut HeaderMap,
) -> Result<(StatusLine, Seen), Error> {
    map.clear();
    let t = Lenient {
        rules,
        in_head: true,
    };
    response_head(head, ends, t, names, map).map_err(|error| refusal(head, rules, 0, error))
}

/// The refusal of a head the lenient parse refused with `error`: the
/// fault [`EarlyCheck`] finds, so that a head is refused for the same
/// fault whether it came whole or in pieces (where the check found it in
/// the pieces already); `error` if the check finds none.
#[cold]
fn refusal(head: &[u8], rules: &Rules, max_target: usize, error: Error) -> Error {
    let mut check = EarlyCheck::default();
    match check.check(head, 0, head.len(), rules, max_target) {
        Err(found) => found,
        Ok(()) => error,
    }
}

/// What a request line holds.
pub(crate) struct RequestLine {
    pub(crate) method: Method,
    /// `None` for the target `/`: `Uri::default()`, which a new
    /// `Request` holds.
    pub(crate) uri: Option<Uri>,
    pub(crate) version: Version,
}

/// Parses `method SP request-target SP HTTP-version` (RFC 9112 section 3).
pub(crate) fn request_line(
    head: &Bytes,
    start: usize,
    end: usize,
    max_target: usize,
) -> Result<RequestLine, ErrorKind> {
    let line = &head[start..end];
    // method = token
    let mut m = 0;
    while m < line.len() && is_tchar(line[m]) {
        m += 1;
    }
    if m == line.len() || line[m] != b' ' {
        return Err(if m == 0 || line.get(m).is_some_and(|&b| b != b' ') {
            ErrorKind::InvalidMethod
        } else {
            ErrorKind::InvalidStartLine
        });
    }
    if m == 0 {
        return Err(ErrorKind::InvalidMethod);
    }
    let method = Method::from_bytes(&line[..m]).map_err(|_| ErrorKind::InvalidMethod)?;

    // request-target SP HTTP-version: the version is the last 8 bytes.
    let rest = &line[m + 1..];
    if rest.len() < 10 || rest[rest.len() - 9] != b' ' {
        return Err(ErrorKind::InvalidStartLine);
    }
    let target_len = rest.len() - 9;
    let version = version(&rest[target_len + 1..])?;
    if version != Version::HTTP_10 && version != Version::HTTP_11 {
        return Err(ErrorKind::UnsupportedVersion);
    }
    let target = &rest[..target_len];
    if target_len > max_target {
        return Err(ErrorKind::TargetTooLong);
    }
    if !all_target_chars(target) {
        return Err(ErrorKind::InvalidTarget);
    }
    // `/`, the commonest target, is the `Uri` a new `Request` holds
    // already (`Uri::default()`): nothing to slice, parse or put in place.
    let uri = if target == b"/" {
        if method == Method::CONNECT {
            return Err(ErrorKind::InvalidTarget);
        }
        None
    } else {
        let target = head.slice(start + m + 1..start + m + 1 + target_len);
        Some(target_uri(&method, target)?)
    };
    Ok(RequestLine {
        method,
        uri,
        version,
    })
}

/// Every byte is a request-target byte: eight at a time, their classes
/// combined without a branch per byte.
#[inline]
pub(crate) fn all_target_chars(target: &[u8]) -> bool {
    let mut words = target.chunks_exact(8);
    for word in &mut words {
        if !word.iter().fold(true, |all, &b| all & is_target_char(b)) {
            return false;
        }
    }
    words.remainder().iter().all(|&b| is_target_char(b))
}

/// Checks the form of the request-target against the method (RFC 9112
/// section 3.2) and builds the `Uri` without copying it.
pub(crate) fn target_uri(method: &Method, target: Bytes) -> Result<Uri, ErrorKind> {
    let first = target[0];
    let connect = method == Method::CONNECT;
    if first == b'/' {
        if connect {
            return Err(ErrorKind::InvalidTarget);
        }
    } else if &target[..] == b"*" {
        if method != Method::OPTIONS {
            return Err(ErrorKind::InvalidTarget);
        }
    } else if !connect {
        // absolute-form: scheme ":" hier-part, with an authority.
        let colon = memchr(b':', &target).ok_or(ErrorKind::InvalidTarget)?;
        if !target[..colon].first().is_some_and(u8::is_ascii_alphabetic)
            || !target[..colon]
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
            || !target[colon + 1..].starts_with(b"//")
        {
            return Err(ErrorKind::InvalidTarget);
        }
    }
    let uri = Uri::from_maybe_shared(target).map_err(|_| ErrorKind::InvalidTarget)?;
    if connect {
        // authority-form: host ":" port, nothing else.
        if uri.scheme().is_some()
            || uri.path_and_query().is_some_and(|p| !p.as_str().is_empty())
            || uri
                .authority()
                .is_none_or(|a| a.port().is_none() || a.as_str().contains('@'))
        {
            return Err(ErrorKind::InvalidTarget);
        }
    } else if first != b'/' && first != b'*' && uri.authority().is_none() {
        return Err(ErrorKind::InvalidTarget);
    }
    Ok(uri)
}

/// Whether a request-target of valid bytes has a form that fits the
/// method, as [`target_uri`] decides when the head is parsed.
#[inline]
pub(crate) fn form_fits(method: &[u8], target: &[u8]) -> bool {
    // `Uri` takes every origin-form target of these bytes up to this
    // length, and `*`: only the method matters (no copy, no `Uri`).
    const URI_MAX: usize = u16::MAX as usize - 1;
    match target {
        [b'/', ..] if target.len() <= URI_MAX => method != b"CONNECT",
        b"*" => method == b"OPTIONS",
        _ => {
            let Ok(method) = Method::from_bytes(method) else {
                return false;
            };
            target_uri(&method, Bytes::copy_from_slice(target)).is_ok()
        }
    }
}

/// Parses `HTTP/DIGIT.DIGIT`. HTTP/1.x with x >= 1 is HTTP/1.1 (RFC 9110
/// section 2.5); other majors are reported as such for the caller to refuse.
pub(crate) fn version(v: &[u8]) -> Result<Version, ErrorKind> {
    if v == b"HTTP/1.1" {
        return Ok(Version::HTTP_11);
    }
    match v {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            Ok(match (major, minor) {
                (b'1', b'0') => Version::HTTP_10,
                (b'1', _) => Version::HTTP_11,
                (b'0', b'9') => Version::HTTP_09,
                (b'2', _) => Version::HTTP_2,
                _ => Version::HTTP_3,
            })
        }
        _ => Err(ErrorKind::InvalidVersion),
    }
}

/// What a status line holds.
pub(crate) struct StatusLine {
    pub(crate) version: Version,
    pub(crate) status: StatusCode,
    /// Offsets of the reason phrase in the head.
    pub(crate) reason: (usize, usize),
}

/// Parses `HTTP-version SP status-code SP [ reason-phrase ]` (RFC 9112
/// section 4). The SP after the status code is required, unless
/// `no_space_after_status` lets the line end right after the code.
pub(crate) fn status_line<T: Tolerance>(
    head: &[u8],
    start: usize,
    end: usize,
    t: T,
) -> Result<StatusLine, T::Error> {
    let line = &head[start..end];
    let reason_at = if line.len() >= 13 && line[8] == b' ' && line[12] == b' ' {
        13
    } else if line.len() == 12 && line[8] == b' ' && t.no_space_after_status() {
        12
    } else {
        return Err(status_line_error(line, t));
    };
    let version = version(&line[..8])?;
    if version != Version::HTTP_10 && version != Version::HTTP_11 {
        return Err(ErrorKind::UnsupportedVersion.into());
    }
    let status = status_code(&line[9..12])?;
    if !line[reason_at..].iter().all(|&b| is_text(b)) {
        return Err(ErrorKind::InvalidReason.into());
    }
    Ok(StatusLine {
        version,
        status,
        reason: (start + reason_at, end),
    })
}

fn status_code(code: &[u8]) -> Result<StatusCode, ErrorKind> {
    if !code.iter().all(u8::is_ascii_digit) {
        return Err(ErrorKind::InvalidStatus);
    }
    StatusCode::from_bytes(code).map_err(|_| ErrorKind::InvalidStatus)
}

/// Why a status line without its two SPs in place is refused; names
/// `no_space_after_status` when the line is a valid version and code with
/// nothing after them.
#[cold]
fn status_line_error<T: Tolerance>(line: &[u8], t: T) -> T::Error {
    if line.len() >= 8 {
        if let Err(kind) = version(&line[..8]) {
            return kind.into();
        }
    }
    if line.len() >= 12 && line[8] == b' ' {
        let accepted = line.len() == 12
            && matches!(version(&line[..8]), Ok(Version::HTTP_10 | Version::HTTP_11))
            && status_code(&line[9..12]).is_ok();
        let hint = accepted.then_some(Switch::NoSpaceAfterStatus);
        return t.refuse(ErrorKind::InvalidStatus, hint);
    }
    ErrorKind::InvalidStartLine.into()
}

/// Parses field lines `first..ends.len()` of a section into `map`, with
/// names found through `names`.
///
/// `fold` decides obs-fold (a line starting with SP or HTAB): `false`
/// refuses it, `true` replaces it with one SP (RFC 9112 section 5.2). A
/// trailer section never folds.
pub(crate) fn fields<T: Tolerance>(
    section: &Bytes,
    ends: &[usize],
    first: usize,
    fold: bool,
    t: T,
    names: &mut NameCache,
    map: &mut HeaderMap,
) -> Result<Seen, T::Error> {
    let mut seen = Seen::default();
    // The field an obs-fold continues: where its name is in the section,
    // and its role. Kept as a place, not a `HeaderName`: a clone and a
    // drop of the name for every field line would pay for the rare fold.
    let mut last: Option<(usize, usize, Role)> = None;
    // The line above was skipped (`skip_invalid_fields`): so are its
    // obs-fold continuations.
    let mut skipping = false;
    // Values are looked up and kept beside the names in the cache from a
    // connection's second message on, by the strict reading only (the
    // lenient one does not look names up in the cache).
    let values = !T::LENIENT && names.keeping();
    for i in first..ends.len() {
        let (start, end) = line(section, ends, i, t)?;
        let text = &section[start..end];
        if text[0] == b' ' || text[0] == b'\t' {
            if T::LENIENT && skipping {
                continue;
            }
            match (last, fold) {
                (Some((from, to, role)), true) => {
                    let joined = fold_into(map, &section[from..to], trim_ows(text))
                        .map_err(|kind| t.at(kind.into(), section, start, end))?;
                    match (joined, role) {
                        // The length is the folded value, not the first line's.
                        (Some(joined), Role::ContentLength) => {
                            seen.content_length_folded(joined.as_bytes());
                        }
                        // Read from the joined value in the map.
                        (Some(_), Role::Connection) => seen.connection_folded = true,
                        _ => {}
                    }
                    continue;
                }
                _ if !T::LENIENT => return Err(ErrorKind::ObsFold.into()),
                _ => {
                    unfoldable(fold, t.in_head() && i > first, t)
                        .map_err(|e| t.at(e, section, start, end))?;
                    skipping = true;
                    continue;
                }
            }
        }
        let (name, role, colon) = match t.name_of(names, text) {
            Ok(Some(found)) => found,
            Ok(None) if !T::LENIENT => return Err(strict_name_error(text).into()),
            Err(()) if !T::LENIENT => return Err(ErrorKind::MissingColon.into()),
            found => match invalid_name(text, found.is_err(), t)
                .map_err(|e| t.at(e, section, start, end))?
            {
                Some(found) => found,
                None => {
                    skipping = true;
                    continue;
                }
            },
        };
        if T::LENIENT {
            skipping = false;
        }
        // The value without the OWS around it (RFC 9112 section 5).
        let after = &text[colon + 1..];
        let (a, b) = ows_bounds(after);
        let value = &after[a..b];
        let vs = start + colon + 1 + a;
        seen.note(role, value);
        // A value the peer sent before with this name is the one kept.
        let value = 'value: {
            if values {
                if let Some(known) = names.known_value(value) {
                    break 'value known.clone();
                }
            }
            let Ok(valid) = HeaderValue::from_maybe_shared(section.slice(vs..vs + value.len()))
            else {
                return Err(t.at(ErrorKind::InvalidFieldValue.into(), section, start, end));
            };
            if values {
                names.learn_value(value);
            }
            valid
        };
        map.append(name, value);
        if fold {
            let name = text[..colon].trim_ascii_end();
            last = Some((start, start + name.len(), role));
        }
    }
    Ok(seen)
}

/// Why the strict reading refuses the name of a field line that has a
/// colon.
#[cold]
fn strict_name_error(text: &[u8]) -> ErrorKind {
    let colon = memchr(b':', text).unwrap_or(0);
    match text[..colon].last() {
        Some(b' ' | b'\t') => ErrorKind::WhitespaceBeforeColon,
        _ => ErrorKind::InvalidFieldName,
    }
}

/// A line starting with SP or HTAB that cannot be folded into a field
/// above it. `Ok` when `skip_invalid_fields` skips it: in a response head,
/// with no field above (RFC 9112 section 2.2 lets a recipient consume such
/// a line). `field_above` says a request head has a field it could fold
/// into, were `obs_fold` on.
#[cold]
fn unfoldable<T: Tolerance>(fold: bool, field_above: bool, t: T) -> Result<(), T::Error> {
    if fold && t.skip_invalid_fields() {
        return Ok(());
    }
    let hint = if fold {
        Some(Switch::SkipInvalidFields)
    } else if field_above {
        Some(Switch::ObsFold)
    } else {
        None
    };
    Err(t.refuse(ErrorKind::ObsFold, hint))
}

/// A field line whose name the strict reading refused (`no_colon`: it has
/// no colon at all). With `space_before_colon`, whitespace before the
/// colon is dropped from the name; with `skip_invalid_fields`, a line
/// that is still not a field is skipped (`Ok(None)`). Otherwise the error
/// names the switch that would accept the line.
#[cold]
fn invalid_name<T: Tolerance>(
    text: &[u8],
    no_colon: bool,
    t: T,
) -> Result<Option<(HeaderName, Role, usize)>, T::Error> {
    let skip = t.skip_invalid_fields();
    if no_colon {
        return match skip {
            true => Ok(None),
            false => Err(t.refuse(ErrorKind::MissingColon, Some(Switch::SkipInvalidFields))),
        };
    }
    let colon = memchr(b':', text).unwrap_or(0);
    let raw = &text[..colon];
    let mut trimmed = raw.len();
    while trimmed > 0 && matches!(raw[trimmed - 1], b' ' | b'\t') {
        trimmed -= 1;
    }
    if trimmed == raw.len() {
        // An invalid name, with no whitespace before the colon.
        return match skip {
            true => Ok(None),
            false => Err(t.refuse(ErrorKind::InvalidFieldName, Some(Switch::SkipInvalidFields))),
        };
    }
    let name = &raw[..trimmed];
    let valid = !name.is_empty() && name.iter().all(|&b| is_tchar(b));
    if valid && t.space_before_colon() {
        if let Ok(name) = HeaderName::from_bytes(name) {
            let role = Role::of(&name);
            return Ok(Some((name, role, colon)));
        }
    }
    if skip {
        return Ok(None);
    }
    let switch = if valid {
        Switch::SpaceBeforeColon
    } else {
        Switch::SkipInvalidFields
    };
    Err(t.refuse(ErrorKind::WhitespaceBeforeColon, Some(switch)))
}

/// Appends an obs-fold continuation to the last value of the field named
/// `name` (as received); returns the joined value.
#[cold]
fn fold_into(
    map: &mut HeaderMap,
    name: &[u8],
    more: &[u8],
) -> Result<Option<HeaderValue>, ErrorKind> {
    let name = HeaderName::from_bytes(name).map_err(|_| ErrorKind::InvalidFieldName)?;
    if let Entry::Occupied(mut entry) = map.entry(name) {
        if let Some(value) = entry.iter_mut().last() {
            let mut joined = BytesMut::with_capacity(value.len() + 1 + more.len());
            joined.extend_from_slice(value.as_bytes());
            if !more.is_empty() {
                if !joined.is_empty() {
                    joined.extend_from_slice(b" ");
                }
                joined.extend_from_slice(more);
            }
            *value = HeaderValue::from_maybe_shared(joined.freeze())
                .map_err(|_| ErrorKind::InvalidFieldValue)?;
            return Ok(Some(value.clone()));
        }
    }
    Ok(None)
}
