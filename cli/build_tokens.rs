//! Writes the `o200k_base` rank table (see `src/tokens/table.rs`) into
//! `OUT_DIR`, for the `tokens` feature.
//!
//! The vocabulary comes from tiktoken-rs (a build dependency), read back
//! rank by rank through its public decoder. Building tiktoken-rs's encoder
//! at run time instead cost each `render --explain` and `diff` about a
//! quarter of a second (it decodes 200,000 base64 lines into hash maps and
//! compiles its regular expressions); read from this table, the first count
//! costs nothing to set up.

use std::collections::HashSet;
use std::error::Error;
use std::path::Path;

use crate::table;

/// Above every rank `o200k_base` uses (its last special token is 200018);
/// ranks without a token are left empty.
const RANK_LIMIT: u32 = 201_088;

pub fn write_tables(out_dir: &Path) -> Result<(), Box<dyn Error>> {
    let bpe = tiktoken_rs::o200k_base()?;
    let specials: HashSet<&str> = bpe.special_tokens();
    let mut bytes = Vec::new();
    let mut offsets = Vec::new();
    let mut slots = vec![0u32; table::SLOTS];
    let mut count = 0usize;
    for rank in 0..RANK_LIMIT {
        offsets.extend_from_slice(&u32::try_from(bytes.len())?.to_le_bytes());
        let Ok(token) = bpe.decode_bytes(&[rank]) else {
            continue;
        };
        if std::str::from_utf8(&token).is_ok_and(|t| specials.contains(t)) {
            continue;
        }
        let mut slot = table::slot_of(&token);
        while slots[slot] != 0 {
            slot = (slot + 1) & (table::SLOTS - 1);
        }
        slots[slot] = rank + 1;
        bytes.extend_from_slice(&token);
        count += 1;
    }
    offsets.extend_from_slice(&u32::try_from(bytes.len())?.to_le_bytes());
    // A table at most half full keeps probes short; o200k_base has 199,998
    // ordinary tokens.
    if count == 0 || count > table::SLOTS / 2 {
        return Err(format!("unexpected o200k_base vocabulary of {count} tokens").into());
    }
    std::fs::write(out_dir.join("o200k_bytes.bin"), bytes)?;
    std::fs::write(out_dir.join("o200k_offsets.bin"), offsets)?;
    let slot_bytes: Vec<u8> = slots.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(out_dir.join("o200k_slots.bin"), slot_bytes)?;
    Ok(())
}
