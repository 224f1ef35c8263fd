#![no_main]
// Invariants: see h1proto_fuzz::roundtrip.
libfuzzer_sys::fuzz_target!(|data: &[u8]| h1proto_fuzz::roundtrip(data));
