//! benches crate
