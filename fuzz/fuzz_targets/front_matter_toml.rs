//! Fuzz target `front_matter_toml`: TOML front matter between `+++` lines. The property is
//! `bcode_fuzz_checks::front_matter_toml::check`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcode_fuzz_checks::front_matter_toml::check(data));
