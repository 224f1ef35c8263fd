//! The forms of a request-target (RFC 9112 section 3.2), checked against
//! the method once, by the reader as soon as the target is whole: the
//! `Uri` is built later from a target known to fit.

use bytes::Bytes;
use http::{Method, Uri};
use memchr::memchr;

use crate::error::ErrorKind;

/// Checks the form of the request-target against the method (RFC 9112
/// section 3.2) and builds the `Uri` without copying it.
fn target_uri(method: &Method, target: Bytes) -> Result<Uri, ErrorKind> {
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
/// method, as [`target_uri`] decides.
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
