//! The `http` types of a head the reader accepted, built from its record
//! (`super::reader::Record`) without reading the grammar again: the
//! method and the `Uri`, and the field map, whose values are `Bytes`
//! slices of the frozen head (no copy). A value that repeats, byte for
//! byte, the one kept with its name in the name cache is a clone of that
//! one instead ([`NameCache::value_at`]).

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::{Method, Request, StatusCode, Uri};

use super::names::{NameCache, same};
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
        let bytes = &section[field.value()];
        // The entry the reader found stands for the name unless the cache
        // started over since; with the name comes the value kept for it if
        // the line holds it, as the reader found (or, for a name it did not
        // predict, as found here).
        let (name, entry, known) = if field.entry != NO_ENTRY && names.generation() == generation {
            let entry = field.entry;
            let known = field.value_known.then(|| names.value_at(entry)).flatten();
            (names.name_at(entry), Some(entry), known)
        } else {
            let name = names.get(&section[field.name()]);
            let (name, entry) = name.ok_or_else(|| refused(ErrorKind::InvalidFieldName))?;
            let known = entry.and_then(|entry| names.value_at(entry));
            (name, entry, known.filter(|k| same(k.as_bytes(), bytes)))
        };
        let value = if field.folded {
            HeaderValue::from_maybe_shared(Bytes::from(unfold(bytes)))
        } else if let Some(known) = known {
            Ok(known.clone())
        } else {
            let value = HeaderValue::from_maybe_shared(section.slice(field.value()));
            if let Some(entry) = entry.filter(|_| values) {
                names.learn_value(entry, bytes);
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
        if let Some((_, Some(entry))) = names.get(&section[field.name()])
            && !field.folded
        {
            names.learn_value(entry, &section[field.value()]);
        }
    }
}
