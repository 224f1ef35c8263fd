//! Heads: the one reader of their grammar, the record of what it accepts,
//! and the `http` types built from that record.

pub(crate) mod build;
pub(crate) mod names;
pub(crate) mod reader;
pub(crate) mod record;
pub(crate) mod target;
