//! The examples, compiled as modules (each server with its own copy of
//! `common`), so that tests drive them in-process.

#[cfg(feature = "tower")]
#[path = "../../examples/axum_server.rs"]
pub mod axum_server;
#[cfg(all(feature = "tokio", feature = "blocking"))]
#[path = "../../examples/blocking_server.rs"]
pub mod blocking_server;
#[cfg(feature = "tokio")]
#[path = "../../examples/client.rs"]
pub mod client;
#[cfg(feature = "examples")]
#[path = "../../examples/common/mod.rs"]
pub mod common;
#[cfg(feature = "tokio")]
#[path = "../../examples/hello_server.rs"]
pub mod hello_server;
#[cfg(feature = "tokio")]
#[path = "../../examples/proxy/main.rs"]
pub mod proxy;
#[cfg(all(feature = "tokio", target_os = "linux"))]
#[path = "../../examples/uring_server.rs"]
pub mod uring_server;
