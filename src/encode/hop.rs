//! Hop-by-hop fields: what a proxy removes before it forwards a message.

use http::header::{CONNECTION, HeaderMap, HeaderName, TE, TRANSFER_ENCODING, UPGRADE};

use crate::grammar::{list_elements, names_match};

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
    for name in fields.keys().map(|name| name.as_str().as_bytes()) {
        // Most names are of none of the fixed lengths: told apart here.
        if matches!(name.len(), 2 | 7 | 10 | 16 | 17) {
            there |= fixed_bit(name);
        }
    }
    if there & 1 != 0 && lists_others(fields) {
        remove_listed(fields);
    }
    for (i, fixed) in FIXED.iter().enumerate() {
        if there & (1 << i) != 0 {
            fields.remove(fixed);
        }
    }
}

/// `true` when `Connection` lists a field the map has besides the fixed
/// ones (which go anyway): its options compared with the map's names,
/// where removing each by name would look it up.
fn lists_others(fields: &HeaderMap) -> bool {
    let values = fields.get_all(CONNECTION).into_iter();
    let mut options = values.flat_map(|value| list_elements(value.as_bytes()));
    options.any(|option| {
        fixed_bit(option) == 0
            && fields
                .keys()
                .any(|name| names_match(option, name.as_str().as_bytes()))
    })
}

/// Removes the fields other than the fixed ones that `Connection` lists.
/// A value is cloned (a reference count, no copy) so that the map can
/// change while its options are read.
#[cold]
fn remove_listed(fields: &mut HeaderMap) {
    let mut line = 0;
    while let Some(value) = fields.get_all(CONNECTION).iter().nth(line).cloned() {
        for option in list_elements(value.as_bytes()).filter(|o| fixed_bit(o) == 0) {
            if let Ok(name) = std::str::from_utf8(option) {
                // A `&str` key is matched case-insensitively, without
                // allocating; one that is not a field name matches nothing.
                fields.remove(name);
            }
        }
        line += 1;
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

/// The bit of `name`'s place in [`FIXED`] (0 for a name not there), in
/// any case: the lengths compared before any byte.
#[inline]
fn fixed_bit(name: &[u8]) -> u8 {
    let is = |fixed: &[u8]| names_match(name, fixed);
    match name.len() {
        10 if is(b"connection") => 1,
        10 if is(b"keep-alive") => 1 << 1,
        16 if is(b"proxy-connection") => 1 << 2,
        2 if is(b"te") => 1 << 3,
        17 if is(b"transfer-encoding") => 1 << 4,
        7 if is(b"upgrade") => 1 << 5,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fixed_name_has_the_bit_of_its_place() {
        for (i, fixed) in FIXED.iter().enumerate() {
            let name = fixed.as_str().to_ascii_uppercase();
            assert_eq!(fixed_bit(fixed.as_str().as_bytes()), 1 << i, "{fixed}");
            assert_eq!(fixed_bit(name.as_bytes()), 1 << i, "{name}");
        }
        assert_eq!(fixed_bit(b"connectio"), 0);
        assert_eq!(fixed_bit(b"host"), 0);
    }

    /// Random maps against the rule written plainly: every name listed in
    /// `Connection` (in any case) and every fixed name go, the rest stays
    /// with its values in order.
    #[test]
    fn removes_what_the_rule_says() {
        let names = [
            "connection",
            "keep-alive",
            "te",
            "upgrade",
            "x-a",
            "x-b",
            "close",
            "host",
        ];
        let options = [
            "close",
            "X-A",
            "x-b",
            "Keep-Alive",
            "TE",
            "x-c",
            " x-a ",
            "",
            "a b",
        ];
        let mut seed = 11u32;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as usize % n
        };
        for _ in 0..5000 {
            let mut fields = HeaderMap::new();
            for v in 0..next(7) {
                let name = names[next(names.len())];
                let value = if name == "connection" {
                    let listed: Vec<&str> =
                        (0..next(3)).map(|_| options[next(options.len())]).collect();
                    listed.join(",")
                } else {
                    v.to_string()
                };
                fields.append(name, value.parse().unwrap());
            }
            let listed: Vec<String> = fields
                .get_all(CONNECTION)
                .iter()
                .flat_map(|v| list_elements(v.as_bytes()))
                .map(|o| String::from_utf8_lossy(o).to_ascii_lowercase())
                .collect();
            let kept = |fields: &HeaderMap| {
                let mut kept: Vec<(String, Vec<Vec<u8>>)> = fields
                    .keys()
                    .map(|k| {
                        (
                            k.to_string(),
                            fields
                                .get_all(k)
                                .iter()
                                .map(|v| v.as_bytes().to_vec())
                                .collect(),
                        )
                    })
                    .collect();
                kept.sort();
                kept
            };
            let before = fields.clone();
            let mut want = kept(&before);
            want.retain(|(name, _)| fixed_bit(name.as_bytes()) == 0 && !listed.contains(name));
            remove_hop_by_hop(&mut fields);
            assert_eq!(kept(&fields), want, "{before:?}");
        }
    }
}
