//! Fuzz target `config`: a `bcode.toml` through the real config loader. The property is
//! `bcode_fuzz_checks::config::check`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcode_fuzz_checks::config::check(data));
