//! The wire view of heads and trailers (field lines as received), and
//! decoding to it alone.

mod wire_only;
mod wire_roundtrip;
mod wire_trailers;
mod wire_view;
