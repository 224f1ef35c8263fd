#![no_main]
// Invariants: see h1proto_fuzz::request_decoder.
libfuzzer_sys::fuzz_target!(|data: &[u8]| h1proto_fuzz::request_decoder(data));
