//! Whether this process runs under user-mode emulation (qemu-user): an AArch64 or s390x
//! binary executed on an x86-64 kernel. Its timings are the emulator's on another machine,
//! never this architecture's; results say so, and the PMU's counters (which would be the
//! host's) are switched off.
//!
//! Two signs, either enough: the kernel's own architecture (`/proc/sys/kernel/arch`, which
//! qemu-user passes through from the host kernel, unlike `uname`) differs from the one we
//! were built for, or this process's name in `/proc/self/status` is the emulator's
//! (`qemu-aarch64`). A whole emulated machine (qemu-system without KVM) shows neither.

use std::sync::OnceLock;

/// The label every emulated result carries.
pub const LABEL: &str = "emulated — timings are not this machine's";

/// The architecture name as Rust spells it (`arm64` is the kernel's other name for aarch64).
fn normalise(arch: &str) -> &str {
    match arch.trim() {
        "arm64" => "aarch64",
        a => a,
    }
}

/// Decides from what the process can read: `status` (/proc/self/status), the kernel's
/// architecture, and the one we were built for. `Some(description)` when emulated.
pub fn decide(status: &str, kernel_arch: Option<&str>, built_for: &str) -> Option<String> {
    let name = status
        .lines()
        .find_map(|l| l.strip_prefix("Name:"))
        .map(str::trim)
        .filter(|n| n.starts_with("qemu-"));
    let kernel = kernel_arch.map(normalise).filter(|k| !k.is_empty());
    let foreign = kernel.filter(|k| *k != built_for);
    match (name, foreign) {
        (None, None) => None,
        (n, _) => Some(format!(
            "{} running {built_for} code{}",
            n.unwrap_or("user-mode emulation"),
            kernel.map(|k| format!(" on a {k} kernel")).unwrap_or_default()
        )),
    }
}

/// This process's emulation, read once.
pub fn detect() -> Option<&'static str> {
    static SEEN: OnceLock<Option<String>> = OnceLock::new();
    SEEN.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/arch").ok();
        decide(&status, kernel.as_deref(), std::env::consts::ARCH)
    })
    .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What qemu-aarch64 8.2 showed our aarch64 test binary on our x86-64 kernel, and what a
    /// native process shows.
    #[test]
    fn qemu_user_is_told_from_a_native_process() {
        let qemu = "Name:\tqemu-aarch64\nUmask:\t0022\nState:\tR (running)\n";
        assert_eq!(
            decide(qemu, Some("x86_64\n"), "aarch64").as_deref(),
            Some("qemu-aarch64 running aarch64 code on a x86_64 kernel")
        );
        // The kernel's architecture alone (a renamed emulator).
        assert_eq!(
            decide("Name:\tworker\n", Some("x86_64"), "s390x").as_deref(),
            Some("user-mode emulation running s390x code on a x86_64 kernel")
        );
        assert_eq!(decide("Name:\tcryptoscope\n", Some("x86_64\n"), "x86_64"), None);
        assert_eq!(decide("Name:\tcryptoscope\n", Some("arm64"), "aarch64"), None);
        // Kernels before 6.1 have no /proc/sys/kernel/arch: the name still tells.
        assert_eq!(decide("Name:\tcryptoscope\n", None, "aarch64"), None);
        assert!(decide("Name:\tqemu-s390x\n", None, "s390x").is_some());
    }

    #[test]
    fn this_process_is_native_exactly_when_the_test_runs_natively() {
        // Under scripts/test.sh's qemu-aarch64 run this binary is aarch64 on x86-64.
        let expect = std::fs::read_to_string("/proc/sys/kernel/arch")
            .map(|k| normalise(&k) != std::env::consts::ARCH)
            .ok();
        if let Some(e) = expect {
            assert_eq!(detect().is_some(), e, "{:?}", detect());
        }
        // The PMU's counters are switched off under emulation, with the reason.
        if detect().is_some() {
            let why = crate::perf::CycleCounter::open().unwrap_err();
            assert!(why.starts_with("switched off under emulation"), "{why}");
        }
    }
}
