//! The `http` types of a head the reader accepted, built from its record
//! (`super::reader::Record`) without reading the grammar again: the
//! method and the `Uri`, and the field map, whose values are `Bytes`
//! slices of the frozen head (no copy). A value that repeats, byte for
//! byte, the one kept with its name in the name cache is a clone of that
//! one instead ([`NameCache::known_value`]).

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::{Method, Request, StatusCode, Uri};

use super::names::NameCache;
use super::reader::start_line;
use super::record::{NO_ENTRY, Record, unfold};
use crate::error::{Error, ErrorKind};

/// The method and the `Uri` of a request head, put in `request`, a new
/// one (built in place: not returned, then moved there).
///
/// [`form_fits`]: super::target::form_fits
pub(crate) fn request_line(
    head: &Bytes,
    record: &Record,
    request: &mut Request<()>,
) -> Result<(), Error> {
    *request.method_mut() = Method::from_bytes(&head[..record.method_end])
        .map_err(|_| start_line(ErrorKind::InvalidMethod))?;
    // The reader checked the target's form against the method
    // ([`form_fits`]) and that a `Uri` takes it: only the `Uri` is built.
    let (from, to) = record.target;
    let uri = Uri::from_maybe_shared(head.slice(from..to))
        .map_err(|_| start_line(ErrorKind::InvalidTarget))?;
    // The new request's `Uri` is the static `/`: forgotten rather than
    // dropped, as its empty field map is.
    debug_assert!(request.uri() == "/");
    std::mem::forget(std::mem::replace(request.uri_mut(), uri));
    Ok(())
}

/// The status code of a response head.
pub(crate) fn status(record: &Record) -> Result<StatusCode, Error> {
    StatusCode::from_u16(record.status).map_err(|_| start_line(ErrorKind::InvalidStatus))
}

/// Appends the field lines of `record` to `map`, with names found through
/// `names`: a value the cache kept for its name is cloned instead of
/// sliced out of `section`, and, with `values`, the cache learns the
/// values it has no copy of yet.
pub(crate) fn fields(
    section: &Bytes,
    record: &Record,
    values: bool,
    names: &mut NameCache,
    map: &mut HeaderMap,
) -> Result<(), Error> {
    let generation = names.generation();
    for field in &record.fields {
        let refused = |kind: ErrorKind| Error::from(kind).at(field.start as u64, None);
        // The entry the reader found stands for the name unless the cache
        // started over since.
        let entry =
            (field.entry != NO_ENTRY && names.generation() == generation).then_some(field.entry);
        let name = match entry {
            Some(entry) => names.name_at(entry),
            None => match names.get(&section[field.name()]) {
                Some((name, _)) => name,
                None => return Err(refused(ErrorKind::InvalidFieldName)),
            },
        };
        let bytes = &section[field.value()];
        let known = match entry {
            Some(entry) if field.value_known => names.value_at(entry),
            Some(_) => None,
            None => names.known_value(bytes),
        };
        let value = if field.folded {
            HeaderValue::from_maybe_shared(Bytes::from(unfold(bytes)))
        } else if let Some(known) = known {
            Ok(known.clone())
        } else {
            let value = HeaderValue::from_maybe_shared(section.slice(field.value()));
            if values {
                names.learn_value(bytes);
            }
            value
        };
        let value = value.map_err(|_| refused(ErrorKind::InvalidFieldValue))?;
        map.append(name, value);
    }
    Ok(())
}

/// Teaches the name cache the names and values of `record` that it did
/// not predict, as [`fields`] does, for a head whose `http` types are not
/// built (wire-only mode): the reader then finds them by one comparison
/// in the heads to come.
#[inline(never)]
pub(crate) fn learn(section: &[u8], record: &Record, names: &mut NameCache) {
    for field in record.fields.iter().filter(|f| f.entry == NO_ENTRY) {
        if names.get(&section[field.name()]).is_some() && !field.folded {
            names.learn_value(&section[field.value()]);
        }
    }
}
