//! What machine a result came from: CPU, cores, SMT, hypervisor, TSC, frequency policy,
//! kernel. Read from /proc, /sys and CPUID; every field that cannot be read is `None`
//! ("unknown"), never guessed.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;

/// The machine a run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: Option<String>,
    pub os: Option<String>,
    pub kernel: Option<String>,
    pub arch: String,
    pub cpu_model: Option<String>,
    pub cpu_vendor: Option<String>,
    /// Features relevant to cryptography (a subset of /proc/cpuinfo flags).
    pub cpu_flags: Vec<String>,
    pub logical_cpus: usize,
    pub physical_cores: Option<usize>,
    pub sockets: Option<usize>,
    pub smt: Option<bool>,
    /// Hypervisor vendor from CPUID leaf 0x40000000 (e.g. "KVMKVMKVM"), if virtualised.
    pub hypervisor: Option<String>,
    pub memory_bytes: Option<u64>,
    /// Calibrated TSC frequency (Hz) of the process that captured this environment.
    pub tsc_hz: Option<f64>,
    /// Core clock cycles per TSC tick, estimated with a dependent-addition chain
    /// ([`crate::clock::core_cycles_per_tick`]); TSC cycles × this ≈ core cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_per_tsc: Option<f64>,
    pub tsc_constant: bool,
    pub tsc_nonstop: bool,
    pub governor: Option<String>,
    /// "on", "off" or None when the kernel does not expose it (typical in VMs).
    pub turbo: Option<String>,
    /// AArch64: the generic timer's rate (`CNTFRQ_EL0`, Hz), the time base there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generic_timer_hz: Option<f64>,
    /// AArch64: the core's implementer and part from MIDR_EL1 (`/proc/cpuinfo`), e.g.
    /// `implementer 0x41 part 0xd0c`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub midr: Option<String>,
    /// User-mode emulation (qemu-user) when the tool ran under it: its timings are not this
    /// machine's ([`crate::emulation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
    /// "available" or "not supported: REASON" (the kernel's reason).
    pub perf_core_cycles: String,
    /// Compilers that built the tool and its providers (name → version line).
    pub compilers: BTreeMap<String, String>,
    /// Provider libraries and their versions (name → version).
    pub libraries: BTreeMap<String, String>,
    /// Whether the machine held its speed during the run (set when a run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<Stability>,
    /// The machine's state just before the run, with what in it makes numbers worse
    /// ([`crate::preflight`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<crate::preflight::Preflight>,
}

/// The verdict on the machine's speed over a run: unstable when any operation's samples
/// changed level by the threshold or more while it was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    pub stable: bool,
    /// Operations with at least one level shift, and operations examined.
    pub shifted_operations: usize,
    pub operations: usize,
    /// The largest change seen, as after/before (or before/after, whichever is above 1).
    pub largest_change: f64,
    /// The detector and its threshold.
    pub method: String,
}

const INTERESTING_FLAGS: &[&str] = &[
    "aes",
    "pclmulqdq",
    "sha_ni",
    "avx",
    "avx2",
    "bmi1",
    "bmi2",
    "adx",
    "popcnt",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512ifma",
    "avx512_vbmi2",
    "vaes",
    "vpclmulqdq",
    "gfni",
    "rdrand",
    "rdseed",
    "constant_tsc",
    "nonstop_tsc",
    "rdtscp",
    "hypervisor",
    "ht",
];

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Captures the environment. `tsc_hz` and `perf_status` come from a calibrated clock.
pub fn capture(tsc_hz: Option<f64>, perf_status: &str) -> Environment {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let flags: Vec<String> = field("flags")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    let logical = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let logical_all = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count()
        .max(logical);
    // Physical cores: distinct (physical id, core id) pairs.
    let mut pairs = std::collections::BTreeSet::new();
    let mut sockets = std::collections::BTreeSet::new();
    let mut phys = None;
    for block in cpuinfo.split("\n\n") {
        let get = |k: &str| {
            block
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(k))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        if let (Some(p), Some(c)) = (get("physical id"), get("core id")) {
            sockets.insert(p.clone());
            pairs.insert((p, c));
        }
    }
    if !pairs.is_empty() {
        phys = Some(pairs.len());
    }
    let smt = read_trim("/sys/devices/system/cpu/smt/active")
        .map(|s| s == "1")
        .or_else(|| phys.map(|p| p < logical_all));
    let memory_bytes = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let os = fs::read_to_string("/etc/os-release").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("PRETTY_NAME="))
            .map(|l| l.trim_start_matches("PRETTY_NAME=").trim_matches('"').to_string())
    });
    let turbo = read_trim("/sys/devices/system/cpu/intel_pstate/no_turbo")
        .map(|v| if v == "1" { "off".to_string() } else { "on".to_string() })
        .or_else(|| {
            read_trim("/sys/devices/system/cpu/cpufreq/boost").map(|v| {
                if v == "1" {
                    "on".to_string()
                } else {
                    "off".to_string()
                }
            })
        });
    let emulated = crate::emulation::detect().map(|e| format!("{e}: {}", crate::emulation::LABEL));
    let midr = match (field("CPU implementer"), field("CPU part")) {
        (Some(i), Some(p)) => Some(format!("implementer {i} part {p}")),
        _ => None,
    };
    // Under emulation /proc/cpuinfo is the host's: said as such, never as this code's CPU.
    let cpu_model = field("model name").or_else(|| midr.clone());
    let cpu_model = match (&emulated, cpu_model) {
        (Some(_), m) => Some(format!(
            "{} under emulation; host CPU: {}",
            std::env::consts::ARCH,
            m.unwrap_or_else(|| "unknown".into())
        )),
        (None, m) => m,
    };
    let mut cpu_flags: Vec<String> = INTERESTING_FLAGS
        .iter()
        .filter(|f| flags.iter().any(|g| g == *f))
        .map(|f| f.to_string())
        .collect();
    if cfg!(target_arch = "aarch64") {
        // The features this code may use, from the kernel's (or the emulator's) HWCAP.
        cpu_flags = hwcap_flags();
    }
    Environment {
        hostname: read_trim("/proc/sys/kernel/hostname"),
        os,
        kernel: read_trim("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        cpu_model,
        cpu_vendor: field("vendor_id"),
        cpu_flags,
        logical_cpus: logical_all,
        physical_cores: phys,
        sockets: (!sockets.is_empty()).then_some(sockets.len()),
        smt,
        hypervisor: hypervisor_vendor(),
        memory_bytes,
        tsc_hz,
        core_per_tsc: tsc_hz.and_then(|_| crate::clock::core_cycles_per_tick()),
        tsc_constant: flags.iter().any(|f| f == "constant_tsc"),
        tsc_nonstop: flags.iter().any(|f| f == "nonstop_tsc"),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        turbo,
        generic_timer_hz: crate::clock::generic_timer_hz(),
        midr,
        emulated,
        perf_core_cycles: perf_status.to_string(),
        compilers: BTreeMap::new(),
        libraries: BTreeMap::new(),
        stability: None,
        preflight: None,
    }
}

#[cfg(target_arch = "x86_64")]
fn hypervisor_vendor() -> Option<String> {
    use core::arch::x86_64::__cpuid;
    let leaf1 = __cpuid(1);
    if leaf1.ecx & (1 << 31) == 0 {
        return None;
    }
    // Leaf 0x40000000 is reserved for hypervisors when CPUID.1:ECX[31] is set.
    let l = __cpuid(0x4000_0000);
    let mut bytes = Vec::with_capacity(12);
    for r in [l.ebx, l.ecx, l.edx] {
        bytes.extend_from_slice(&r.to_le_bytes());
    }
    let s: String = String::from_utf8_lossy(&bytes).trim_matches('\0').trim().to_string();
    Some(if s.is_empty() { "unknown hypervisor".into() } else { s })
}

#[cfg(not(target_arch = "x86_64"))]
fn hypervisor_vendor() -> Option<String> {
    None
}

/// AArch64 HWCAP bits (arch/arm64/include/uapi/asm/hwcap.h) of the features cryptography
/// uses, as the kernel names them in /proc/cpuinfo.
const HWCAPS: &[(u32, &str)] = &[
    (1, "asimd"),
    (3, "aes"),
    (4, "pmull"),
    (5, "sha1"),
    (6, "sha2"),
    (17, "sha3"),
    (21, "sha512"),
    (22, "sve"),
];

/// The AArch64 crypto features the kernel reports (AT_HWCAP; SVE2 is AT_HWCAP2 bit 1).
fn hwcap_flags() -> Vec<String> {
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: getauxval has no preconditions; 0 means absent.
        let (h, h2) = unsafe { (libc::getauxval(libc::AT_HWCAP), libc::getauxval(libc::AT_HWCAP2)) };
        let mut v: Vec<String> = HWCAPS
            .iter()
            .filter(|(bit, _)| h & (1 << bit) != 0)
            .map(|(_, n)| n.to_string())
            .collect();
        if h2 & (1 << 1) != 0 {
            v.push("sve2".into());
        }
        v
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        let _ = HWCAPS;
        Vec::new()
    }
}

/// The hypervisor's vendor string, when virtualised (CPUID leaf 0x40000000 on x86-64).
pub fn hypervisor() -> Option<String> {
    hypervisor_vendor()
}

/// The CPU the calling thread runs on.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// Pins the calling thread to one logical CPU.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET bounds-checks via the index
    // we pass (checked below), and sched_setaffinity reads the set we own.
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn capture_reads_this_machine() {
        let e = super::capture(None, "not supported: test");
        assert!(e.logical_cpus >= 1);
        assert!(e.kernel.is_some());
        if cfg!(target_arch = "x86_64") {
            assert!(e.cpu_model.is_some());
        }
        // On AArch64 the time base's rate and the HWCAP features (Advanced SIMD is in
        // every AArch64 Linux target, qemu's included).
        if cfg!(target_arch = "aarch64") {
            assert!(e.generic_timer_hz.is_some_and(|f| f > 0.0), "{:?}", e.generic_timer_hz);
            assert!(e.cpu_flags.iter().any(|f| f == "asimd"), "{:?}", e.cpu_flags);
        }
        // Emulated exactly when the emulation module says so, and then labelled.
        assert_eq!(e.emulated.is_some(), crate::emulation::detect().is_some());
        if let Some(x) = &e.emulated {
            assert!(x.ends_with(crate::emulation::LABEL), "{x}");
            assert!(e.cpu_model.as_deref().unwrap_or_default().contains("under emulation"));
        }
    }
}
