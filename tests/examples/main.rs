//! The examples as a user runs them: the servers as child processes (under
//! resource limits, shut down by signal, with their timeouts), the client's
//! options beside curl, its streaming and its upload, `decode`, and the servers' accept policy.

mod accept_policy;
#[cfg(feature = "tokio")]
mod example_client_curl;
#[cfg(all(feature = "tokio", feature = "blocking"))]
mod example_client_upload;
mod example_decode;
mod example_protocol;
mod example_shutdown;
mod example_siege;
mod example_timeouts;
mod example_uring_unavailable;
mod exhaustion;
