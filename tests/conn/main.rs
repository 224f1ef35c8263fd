//! The connections (`ServerConnection`, `ClientConnection`): keep-alive,
//! pipelining, `Expect: 100-continue`, HTTP/1.0, upgrades and CONNECT,
//! trailers and EOF, errors, and what is reused from message to message.

// Tests here that measure the heap count per thread, so they run beside
// the others.
#[global_allocator]
static ALLOC: h1proto_test_support::alloc::Counting = h1proto_test_support::alloc::Counting;

mod support;

mod conn_errors;
mod conn_expect_continue;
mod conn_http10;
mod conn_keep_alive;
mod conn_pipelining;
mod conn_response_before_body;
mod conn_trailers_eof;
mod conn_upgrade;
mod connect_framing;
mod recycled_extensions;
mod reuse_across_messages;
