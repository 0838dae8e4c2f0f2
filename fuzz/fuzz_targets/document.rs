//! Fuzz target `document`: a whole skill or invariant file. The property is
//! `bcode_fuzz_checks::document::check`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| bcode_fuzz_checks::document::check(data));
