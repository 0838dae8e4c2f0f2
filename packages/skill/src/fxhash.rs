//! A small, fast, non-cryptographic hasher (the multiply-rotate scheme rustc
//! uses) for discovery's own lookups: cache keys and fingerprints of local
//! paths, which no attacker chooses in bulk, hashed tens of thousands of
//! times per rebuild where SipHash showed in profiles.

#[cfg(test)]
use std::hash::Hash;
use std::hash::{BuildHasherDefault, Hasher};

/// See the module documentation.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` builder using [`FxHasher`].
pub type FxBuildHasher = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    fn fx_hash<T: Hash + ?Sized>(value: &T) -> u64 {
        let mut hasher = FxHasher::default();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn distinguishes_nearby_inputs_and_is_stable() {
        assert_ne!(fx_hash("a/b"), fx_hash("a/c"));
        assert_ne!(fx_hash("abcdefgh"), fx_hash("abcdefgh\0"));
        assert_eq!(fx_hash(&(1u64, "x")), fx_hash(&(1u64, "x")));
    }
}
