//! The fuzz targets' checks. They live in the test support crate
//! (`h1proto_test_support::fuzz`), shared with the plain `cargo test`
//! replay of every seed and saved input, so a saved input is judged the
//! same way by libFuzzer and by the test suite.

pub use h1proto_test_support::differential;
pub use h1proto_test_support::fuzz::*;
