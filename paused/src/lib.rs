//! Nothing but its tests: `tests/paused_clock.rs` runs h1proto's tokio
//! adapter on tokio's paused clock (see the package description).
