//! Build id of the engine: a digest of every source that can change what a
//! simulation returns — the congestion controls (`cc/`, `tests/cc/`), the
//! engine (`crates/sim`), the C glue (`crates/cc-native`), this glue and
//! the lock file — exported as `CCARENA_BUILD_ID` for `_core.build_id()`.
//! A sweep caches each point under its scenario and this id, so a point
//! computed by an older engine or older algorithm is never reused.
//!
//! FNV-1a (64 bit) over the sorted relative paths and contents: a change
//! detector, not a security measure. Generated files that do not shape
//! results (the BPF build's `cc/include/vmlinux.h`) are left out, so that
//! building the BPF objects does not invalidate every cached point.

use std::fs;
use std::path::{Path, PathBuf};

/// Sources, relative to the workspace root: directories are walked.
const SOURCES: &[&str] = &[
    "cc",
    "tests/cc",
    "crates/sim/src",
    "crates/sim/Cargo.toml",
    "crates/cc-native/src",
    "crates/cc-native/build.rs",
    "crates/cc-native/Cargo.toml",
    "crates/py/src",
    "crates/py/Cargo.toml",
    "Cargo.lock",
];

/// File names that are build products, not sources.
const SKIP: &[&str] = &["vmlinux.h"];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for source in SOURCES {
        let path = root.join(source);
        println!("cargo:rerun-if-changed={}", path.display());
        collect(&path, &mut files);
    }
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|p| (p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().into_owned(), p))
        .collect();
    named.sort();
    let mut hash = Fnv1a::new();
    for (name, path) in &named {
        hash.write(name.as_bytes());
        hash.write(&[0]);
        hash.write(&fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display())));
        hash.write(&[0]);
    }
    println!("cargo:rustc-env=CCARENA_BUILD_ID={:016x}", hash.0);
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = fs::read_dir(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for entry in entries {
            collect(&entry, files);
        }
    } else if path.is_file() {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let source = name.ends_with(".c") || name.ends_with(".h") || name.ends_with(".rs") || name.ends_with(".toml") || name == "Cargo.lock";
        if source && !SKIP.contains(&name) {
            files.push(path.to_path_buf());
        }
    }
}

/// 64-bit FNV-1a.
struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
