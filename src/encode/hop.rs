//! Hop-by-hop fields: what a proxy removes before it forwards a message.

use http::header::{CONNECTION, HeaderMap, HeaderName, TE, TRANSFER_ENCODING, UPGRADE};

use crate::grammar::list_elements;

/// Removes the hop-by-hop fields from a message's fields, as an
/// intermediary must before it forwards the message (RFC 9110 section
/// 7.6.1): `Connection` and every field it lists, then `Keep-Alive`,
/// `Proxy-Connection`, `TE`, `Transfer-Encoding` and `Upgrade` whether
/// listed or not.
///
/// `Trailer` stays: it is end-to-end (RFC 9110 section 6.6.2) and
/// announces trailer fields a forwarded chunked message still carries. A
/// proxy that drops the trailers (because it forwards to an HTTP/1.0 peer,
/// or with a `Content-Length`) removes `Trailer` itself. The credentials
/// fields of proxies (`Proxy-Authorization`, `Proxy-Authenticate`) stay
/// too: a proxy that authenticates consumes them, one in a chain may relay
/// them (RFC 9110 section 11.7).
///
/// Apply it to the fields as received, before adding the proxy's own
/// (`Via`, `Forwarded`, a new `Connection`): a peer can list any field name
/// in `Connection`, and every one it lists is removed. If that removes
/// `Content-Length`, the encoder frames the body itself; if it removes
/// `Host`, the request encoder writes one from an absolute URI or refuses
/// the request. Options that are not valid field names are ignored.
///
/// Nothing is allocated. Removing from a `HeaderMap` may change the order
/// in which fields of different names iterate (which RFC 9110 section 5.3
/// leaves without meaning); the values of one name keep their order.
///
/// ```
/// use http::HeaderMap;
///
/// let mut fields = HeaderMap::new();
/// fields.insert("connection", "close, X-Hop".parse().unwrap());
/// fields.insert("x-hop", "1".parse().unwrap());
/// fields.insert("keep-alive", "timeout=5".parse().unwrap());
/// fields.insert("transfer-encoding", "chunked".parse().unwrap());
/// fields.insert("x-end-to-end", "kept".parse().unwrap());
/// h1proto::remove_hop_by_hop(&mut fields);
/// assert_eq!(fields.len(), 1);
/// assert!(fields.contains_key("x-end-to-end"));
/// ```
pub fn remove_hop_by_hop(fields: &mut HeaderMap) {
    // One pass over the names finds which of the fixed ones are there: a
    // field that is not costs no lookup.
    let mut there = 0u8;
    for name in fields.keys() {
        there |= fixed_bit(name.as_str());
    }
    // The options listed in Connection name fields to remove (the fixed
    // ones go below). A value is cloned (a reference count, no copy) so
    // that the map can change while its options are read.
    let mut line = 0;
    while there & 1 != 0
        && let Some(value) = fields.get_all(CONNECTION).iter().nth(line).cloned()
    {
        for option in list_elements(value.as_bytes()) {
            let fixed = |fixed: &HeaderName| option.eq_ignore_ascii_case(fixed.as_str().as_bytes());
            if FIXED.iter().any(fixed) {
                continue;
            }
            if let Ok(name) = std::str::from_utf8(option) {
                // A `&str` key is matched case-insensitively, without
                // allocating; one that is not a field name matches nothing.
                fields.remove(name);
            }
        }
        line += 1;
    }
    for (i, fixed) in FIXED.iter().enumerate() {
        if there & (1 << i) != 0 {
            fields.remove(fixed);
        }
    }
}

/// The fields removed whether `Connection` lists them or not, `Connection`
/// first: removed by these names, which `http` finds without parsing a
/// string.
static FIXED: [HeaderName; 6] = [
    CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    TE,
    TRANSFER_ENCODING,
    UPGRADE,
];

/// The bit of `name`'s place in [`FIXED`] (0 for a name not there): a
/// `match`, which compares the lengths before any byte.
#[inline]
fn fixed_bit(name: &str) -> u8 {
    match name {
        "connection" => 1,
        "keep-alive" => 1 << 1,
        "proxy-connection" => 1 << 2,
        "te" => 1 << 3,
        "transfer-encoding" => 1 << 4,
        "upgrade" => 1 << 5,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fixed_name_has_the_bit_of_its_place() {
        for (i, fixed) in FIXED.iter().enumerate() {
            assert_eq!(fixed_bit(fixed.as_str()), 1 << i, "{fixed}");
        }
        assert_eq!(fixed_bit("connectio"), 0);
        assert_eq!(fixed_bit("host"), 0);
    }
}
