#![no_main]
// Invariants: see h1proto_fuzz::client_connection.
libfuzzer_sys::fuzz_target!(|data: &[u8]| h1proto_fuzz::client_connection(data));
