//! The forms of a request-target (RFC 9112 section 3.2), checked against
//! the method once, by the reader as soon as the target is whole: the
//! `Uri` is built later from a target known to fit.

use http::Uri;

/// Whether a request-target of valid bytes has a form that fits the
/// method (a token), and a `Uri` takes it: origin-form without CONNECT,
/// `*` with OPTIONS only, authority-form with CONNECT only, absolute-form
/// without CONNECT.
#[inline]
pub(crate) fn form_fits(method: &[u8], target: &[u8]) -> bool {
    // `Uri` takes every origin-form target of these bytes up to this
    // length, and `*`: only the method matters (no copy, no `Uri`).
    const URI_MAX: usize = u16::MAX as usize - 1;
    match target {
        [b'/', ..] if target.len() <= URI_MAX => method != b"CONNECT",
        b"*" => method == b"OPTIONS",
        _ => uri_form_fits(method == b"CONNECT", target),
    }
}

/// [`form_fits`] for a target the `Uri` decides: authority-form with
/// CONNECT, absolute-form without. An origin-form target comes here only
/// when it is too long for a `Uri`, which refuses it.
fn uri_form_fits(connect: bool, target: &[u8]) -> bool {
    let Ok(uri) = Uri::try_from(target) else {
        return false;
    };
    if connect {
        // authority-form: host ":" port, nothing else.
        return uri.scheme().is_none()
            && uri.path_and_query().is_none_or(|p| p.as_str().is_empty())
            && uri
                .authority()
                .is_some_and(|a| a.port().is_some() && !a.as_str().contains('@'));
    }
    // absolute-form: scheme ":" "//" authority ... A `Uri` has a scheme
    // only for scheme characters before "://" at the start; the scheme
    // must start with a letter.
    uri.scheme().is_some() && target[0].is_ascii_alphabetic() && uri.authority().is_some()
}

#[cfg(test)]
mod tests {
    use super::form_fits;

    /// An absolute-form target is a scheme of a letter and scheme
    /// characters, "://" and an authority; CONNECT takes none.
    #[test]
    fn the_absolute_form() {
        for good in ["http://a/", "HTTP://a", "h+t.p-1://a:80/x?y", "x://a"] {
            assert!(form_fits(b"GET", good.as_bytes()), "{good}");
            assert!(!form_fits(b"CONNECT", good.as_bytes()), "{good}");
        }
        for bad in [
            "1http://a/",
            "+x://a",
            "://a",
            "http:/a",
            "http:a",
            "a:b",
            "h_p://a",
        ] {
            assert!(!form_fits(b"GET", bad.as_bytes()), "{bad}");
        }
    }

    /// An origin-form target is taken up to the length a `Uri` takes, and
    /// refused past it, whatever the method.
    #[test]
    fn an_origin_form_too_long_for_a_uri_is_refused() {
        let mut target = vec![b'a'; u16::MAX as usize - 1];
        target[0] = b'/';
        assert!(form_fits(b"GET", &target));
        target.push(b'a');
        assert!(!form_fits(b"GET", &target));
        assert!(!form_fits(b"CONNECT", &target));
    }
}
