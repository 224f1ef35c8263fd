#![no_main]
// h1proto against httparse on arbitrary bytes: every disagreement must be
// one of the documented differences (test-support/src/differential.rs).
use h1proto_fuzz::differential;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(difference) = differential::compare(data) {
        panic!("{difference}");
    }
});
