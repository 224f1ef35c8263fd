//! The head parser: finds the lines of a head with memchr and turns them into
//! `http` types whose field values are slices of the input.

pub(crate) mod bare;
pub(crate) mod early;
pub(crate) mod names;
pub(crate) mod parse;
pub(crate) mod scan;
