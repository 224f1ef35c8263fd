//! The sessions and their drivers: exchanges, timeouts and waits, shutdown,
//! buffers given back, the duplex contract, the tokio and blocking
//! adapters driving them, and the runtime-neutral driver on smol and
//! tokio-uring with its shutdown fan-out.

// Tests here that measure the heap count per thread, so they run beside
// the others.
#[global_allocator]
static ALLOC: h1proto_test_support::alloc::Counting = h1proto_test_support::alloc::Counting;

mod date_field;
mod driver_clock;
mod driver_smol;
mod driver_uring;
mod driver_wakes;
mod echo_copies;
mod session_buffers;
mod session_chunk_extensions;
mod session_duplex;
mod session_exchanges;
mod session_read_slice;
mod session_shutdown;
mod session_timeouts;
mod session_waits;
#[cfg(all(feature = "tokio", feature = "blocking"))]
mod session_write_all;
#[cfg(feature = "tokio")]
mod shutdown_fanout;
mod steady_state_allocations;
#[cfg(feature = "tokio")]
mod tokio_client_gone;
#[cfg(feature = "tokio")]
mod tokio_driver_waits;
#[cfg(feature = "tokio")]
mod tokio_duplex;
