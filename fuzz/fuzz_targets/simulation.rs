#![no_main]
// Invariants: see h1proto_fuzz::simulation.
libfuzzer_sys::fuzz_target!(|data: &[u8]| h1proto_fuzz::simulation(data));
