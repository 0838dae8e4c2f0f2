//! Links the `bcode-prompt` binary with packed relative relocations
//! (`-z pack-relative-relocs`, DT_RELR) where the C library loads them.
//!
//! The binary is position-independent, and its 1.4 MB of tables of
//! pointers (most of them chrono-tz's zone data) need about 49,000 relative
//! relocations at start-up. As plain `.rela.dyn` entries that is 1.18 MB
//! the loader reads on every run; packed, 21 KB. Measured on the small
//! repository of `benches/scripts/compare_codex.py`: a render's peak RSS
//! 13.6–14.0 → 11.8 MB and `--version` 6.7–8.1 → 5.6–6.5 ms (see
//! `benches/notes/2026-12-01-1617-issue-15-regressions-paired.md`). The
//! binary stays position-independent.
//!
//! glibc loads DT_RELR from 2.36 on, and the linker then makes the binary
//! require it (`GLIBC_ABI_DT_RELR`), so an older loader refuses it with a
//! message instead of crashing. The flag is therefore only passed when
//! building for the machine itself (host = target, Linux, glibc) and its
//! glibc is 2.36 or newer; `BCODE_PACK_RELOCS=0` turns it off.

use std::process::Command;

// The token counter's rank table (the `tokens` feature).
#[cfg(feature = "tokens")]
#[path = "build_tokens.rs"]
mod build_tokens;
#[cfg(feature = "tokens")]
#[path = "src/tokens/table.rs"]
mod table;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "tokens")]
    {
        println!("cargo:rerun-if-changed=build_tokens.rs");
        println!("cargo:rerun-if-changed=src/tokens/table.rs");
        let out_dir = std::env::var_os("OUT_DIR").ok_or("cargo sets no OUT_DIR")?;
        build_tokens::write_tables(std::path::Path::new(&out_dir))?;
    }
    println!("cargo:rerun-if-env-changed=BCODE_PACK_RELOCS");
    if std::env::var("BCODE_PACK_RELOCS").is_ok_and(|v| v == "0") {
        return Ok(());
    }
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    let native = std::env::var("HOST").ok() == std::env::var("TARGET").ok();
    if linux_gnu && native && glibc_version().is_some_and(|v| v >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    Ok(())
}

/// The build machine's glibc version, from `getconf GNU_LIBC_VERSION`
/// (`glibc 2.36`).
fn glibc_version() -> Option<(u32, u32)> {
    let output = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()?
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()?;
    Some((major, minor))
}
