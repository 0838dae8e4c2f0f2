//! Fuzz target `yaml_differential`: the YAML fast path, the full parser and recovery against each other. The property is
//! `bcode_fuzz_checks::yaml_differential::check`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcode_fuzz_checks::yaml_differential::check(data));
