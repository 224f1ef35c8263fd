//! The decoders (requests, responses, bodies, chunked framing): strictness,
//! errors and where they point, leniency switches, smuggling rules, bounded
//! memory and split invariance.

// Tests here that measure the heap count per thread, so they run beside
// the others.
#[global_allocator]
static ALLOC: h1proto_test_support::alloc::Counting = h1proto_test_support::alloc::Counting;

mod bounded_memory;
mod chunk_extensions;
mod chunk_overhead;
mod chunked_data;
mod early_refusal;
mod end_with_last_byte;
mod error_location;
mod host_value;
mod leniency;
mod smuggling;
mod split_invariance;
