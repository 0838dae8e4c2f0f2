//! bcode-prompt CLI
fn main() {}
