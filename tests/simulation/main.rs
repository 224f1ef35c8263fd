//! Sessions in the deterministic simulation: generated plans of requests,
//! bodies, delays and endings, checked against the timeout table.

mod simulation;
