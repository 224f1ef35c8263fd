//! The example servers and client in-process against real peers (curl,
//! Python's http.client and http.server, the adapters' own), and bad peers
//! at the socket.

mod bad_peers;
mod interop_adapter;
mod interop_client;
mod interop_curl;
mod interop_lenient_client;
mod interop_python;
