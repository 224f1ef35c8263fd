//! What h1proto's tests, benches, fuzz targets and development tools
//! share, written once: a counting allocator, the deterministic simulator,
//! the fuzz targets' checks, the differential rules against httparse, the
//! benches' message corpus, session test drivers, and (with the adapter
//! features) the example servers and proxy run in-process or as child
//! processes. Not published.
#![allow(clippy::duplicate_mod)] // every example server has its own `common`

pub mod alloc;
pub mod chunks;
pub mod corpus;
pub mod differential;
pub mod fuzz;
pub mod schedule;
pub mod session;
pub mod sim;

#[cfg(feature = "examples")]
pub mod process;

#[cfg(feature = "tokio")]
pub mod proxy;

#[cfg(all(feature = "tokio", feature = "blocking"))]
pub mod servers;

/// The examples, compiled as modules so that tests drive them in-process:
/// the tests exercise the very code a user copies.
#[allow(dead_code, unreachable_pub)]
pub mod examples;
