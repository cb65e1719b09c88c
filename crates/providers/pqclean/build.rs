//! Records the versions of the pqcrypto crates (read from the workspace Cargo.lock).
fn main() {
    let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut found = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if n.starts_with("pqcrypto-") {
                found.push(format!("{n}={}", v.trim_matches('"')));
            }
        }
    }
    println!("cargo:rustc-env=CRYPTOSCOPE_PQCRYPTO_VERSIONS={}", found.join(","));
}
