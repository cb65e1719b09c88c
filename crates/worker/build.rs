//! Records which compilers built this tool, for the environment section of every result.
use std::process::Command;

fn first_line(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

fn main() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!("cargo:rustc-env=CRYPTOSCOPE_C_COMPILER={}", first_line(&cc, &["--version"]));
    println!("cargo:rustc-env=CRYPTOSCOPE_RUSTC={}", first_line(&rustc, &["-V"]));
    println!("cargo:rustc-env=CRYPTOSCOPE_OPT_LEVEL={}", std::env::var("OPT_LEVEL").unwrap_or_default());
    println!("cargo:rustc-env=CRYPTOSCOPE_PROFILE={}", std::env::var("PROFILE").unwrap_or_default());
    println!("cargo:rerun-if-env-changed=CC");
}
