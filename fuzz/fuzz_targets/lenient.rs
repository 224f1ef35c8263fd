#![no_main]
// Invariants: see h1proto_fuzz::lenient.
libfuzzer_sys::fuzz_target!(|data: &[u8]| h1proto_fuzz::lenient(data));
