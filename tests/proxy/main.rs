//! The example proxy in-process: forwarding, smuggling refused on both
//! sides, and interop with the example servers and curl.

mod proxy;
mod proxy_cli;
#[cfg(all(feature = "tokio", feature = "blocking"))]
mod proxy_interop;
mod proxy_smuggling;
