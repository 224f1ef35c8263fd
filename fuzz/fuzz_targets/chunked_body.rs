#![no_main]
// Invariants: see h1proto_fuzz::chunked_body.
libfuzzer_sys::fuzz_target!(|data: &[u8]| h1proto_fuzz::chunked_body(data));
