//! The layout of the `o200k_base` rank table that `build.rs` writes and
//! `tokens.rs` reads, shared by both so the hash and the slot count agree.
//!
//! Three files in `OUT_DIR`: every token's bytes one after the other in
//! rank order (`o200k_bytes.bin`), the start of each rank's bytes plus one
//! final end (`o200k_offsets.bin`, little-endian `u32`), and an
//! open-addressing hash table of [`SLOTS`] little-endian `u32` slots
//! (`o200k_slots.bin`) holding rank + 1, or 0 for an empty slot, probed
//! linearly from [`slot_of`]. The table is data compiled into the binary,
//! so nothing is parsed when the first token is counted.

/// The number of hash slots: a power of two, a little over twice the
/// vocabulary, so a probe for a byte string that is no token (most of what
/// the merge loop asks) ends after one or two slots.
pub const SLOTS: usize = 1 << 19;

/// The first slot probed for `bytes` (64-bit FNV-1a, masked to the table).
pub fn slot_of(bytes: &[u8]) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // The mask keeps the value below SLOTS, which fits every usize.
    (hash as usize) & (SLOTS - 1)
}
