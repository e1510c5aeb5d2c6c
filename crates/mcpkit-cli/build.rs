//! Link flags of the `mcpkit` binary alone (library users link their programs as they choose).
//!
//! Packed relative relocations (`-z pack-relative-relocs`, DT_RELR): a PIE's relative
//! relocations as a bitmap instead of 24-byte `Elf64_Rela` entries. The dynamic loader then
//! applies its ~34,000 in a fraction of the instructions, and the file is ~0.8 MB smaller
//! (BENCHMARKS.md, "The release binary and start-up"). It needs a linker that
//! knows the flag (GNU ld 2.38, lld 15) and a glibc loader that applies DT_RELR (2.36): the
//! binary then requires glibc 2.36 where it runs. Both are probed here by linking and running a
//! tiny program with the flag; when either is missing, or when cross-compiling (the probe could
//! not run), the binary is linked as before.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" && native && relr_works() {
        println!("cargo:rustc-link-arg-bin=mcpkit=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the linker rustc uses links a program with `-z pack-relative-relocs` without a
/// warning (an older GNU ld ignores the flag with one) and the loader here runs it.
fn relr_works() -> bool {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let probe = out_dir.join("relr-probe");
    // rustc links with `cc` unless a linker is configured for the target.
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    // A relative relocation to pack: a pointer in writable data of a PIE.
    let source = b"static int x;\nint *p = &x;\nint main(void) { return *p; }\n";
    let Ok(mut child) = Command::new(&linker)
        .args(["-x", "c", "-", "-pie", "-fPIE", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&probe)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return false;
    };
    let written = child
        .stdin
        .take()
        .is_some_and(|mut stdin| stdin.write_all(source).is_ok());
    let Ok(linked) = child.wait_with_output() else {
        return false;
    };
    written
        && linked.status.success()
        && linked.stderr.is_empty()
        && Command::new(&probe).status().is_ok_and(|s| s.success())
}
