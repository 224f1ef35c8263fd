//! h1proto beside other parsers and the fuzzers: generated heads against
//! httparse under the documented differences, the differential campaign's
//! minimized disagreements, and every fuzz target's seeds and saved inputs
//! replayed through the fuzzers' checks.

mod differential;
mod differential_regressions;
mod fuzz_corpus;
