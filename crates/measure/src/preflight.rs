//! The machine's state before a run, and what in it makes numbers worse.
//!
//! Read from /sys and /proc (a recorded copy of them in tests): the measured CPU's
//! frequency governor, turbo or boost, its SMT siblings and how busy they and it were over a
//! short look, the hypervisor's steal time, and `perf_event_paranoid`. Where a setting is
//! known to make timings noisier or biased, one warning each with the command that would
//! change it, as pyperf's `system tune` does; nothing is changed here. Nothing in this
//! module decides on the machine's speed: a decision is a pure function of the files read.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Load above this share of a CPU's time, on the measured CPU or its SMT sibling, is
/// warned about (percent).
pub const BUSY_PCT: f64 = 10.0;
/// Steal time above this share of the CPUs' time is warned about (percent).
pub const STEAL_PCT: f64 = 2.0;

/// What the preflight found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Preflight {
    /// The CPU the run is pinned to; `None`: not pinned (the machine as a whole is read).
    pub cpu: Option<usize>,
    /// The governor of the measured CPU (of CPU 0 when not pinned); `None`: no cpufreq
    /// (typical in virtual machines, where the host decides).
    pub governor: Option<String>,
    /// Turbo or boost: `Some(true)` on, `Some(false)` off, `None` not exposed.
    pub boost: Option<bool>,
    /// The file that says so (`intel_pstate/no_turbo`, `cpufreq/boost`, `cpufreq/policyN/boost`).
    pub boost_control: Option<String>,
    /// The other logical CPUs on the measured CPU's core (SMT siblings).
    pub smt_siblings: Vec<usize>,
    /// How busy the measured CPU (the whole machine when not pinned) was over the look,
    /// percent of its time, and the busiest sibling.
    pub busy_pct: Option<f64>,
    pub sibling_busy_pct: Option<f64>,
    /// Share of all CPUs' time the hypervisor gave to others over the look, percent.
    pub steal_pct: Option<f64>,
    /// How long the look at /proc/stat lasted, milliseconds.
    pub look_ms: f64,
    pub hypervisor: Option<String>,
    pub perf_event_paranoid: Option<i64>,
    /// Core cycles from the PMU: "available" or "not supported: REASON".
    pub pmu: String,
    pub warnings: Vec<Warning>,
}

/// A setting that makes numbers worse, and how to change it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub what: String,
    pub fix: String,
}

/// Where /sys and /proc are read from: `/` on the machine, a recorded copy in tests.
pub struct Tree {
    root: PathBuf,
}

impl Tree {
    pub fn new(root: impl Into<PathBuf>) -> Tree {
        Tree { root: root.into() }
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel.trim_start_matches('/')))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }
}

/// One CPU's (or all CPUs', key `None`) times from /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Times {
    pub total: u64,
    pub idle: u64,
    pub steal: u64,
}

/// The `cpu` lines of /proc/stat: user nice system idle iowait irq softirq steal (guest
/// time is already inside user and nice).
pub fn cpu_times(stat: &str) -> BTreeMap<Option<usize>, Times> {
    let mut out = BTreeMap::new();
    for l in stat.lines() {
        let mut f = l.split_whitespace();
        let Some(name) = f.next().and_then(|n| n.strip_prefix("cpu")) else {
            continue;
        };
        let key = if name.is_empty() {
            None
        } else if let Ok(n) = name.parse::<usize>() {
            Some(n)
        } else {
            continue;
        };
        let v: Vec<u64> = f.take(8).filter_map(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            continue;
        }
        out.insert(
            key,
            Times {
                total: v.iter().sum(),
                idle: v[3] + v[4],
                steal: v[7],
            },
        );
    }
    out
}

/// Percent of `key`'s time between the two readings that was busy (not idle, not waiting
/// for I/O, not stolen), or `None` when it cannot be told.
fn busy(a: &BTreeMap<Option<usize>, Times>, b: &BTreeMap<Option<usize>, Times>, key: Option<usize>) -> Option<f64> {
    let (x, y) = (a.get(&key)?, b.get(&key)?);
    let total = y.total.checked_sub(x.total)?;
    if total == 0 {
        return None;
    }
    let idle = y.idle.saturating_sub(x.idle) + y.steal.saturating_sub(x.steal);
    Some(total.saturating_sub(idle) as f64 / total as f64 * 100.0)
}

/// A kernel CPU list (`0-3,8,10-11`).
pub fn cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<usize>().ok()),
        }
    }
    out
}

/// Everything a decision needs that is not a file: the two /proc/stat readings, the
/// hypervisor (from CPUID), the PMU's status and whether we run as root.
pub struct Observed<'a> {
    pub stat_before: &'a str,
    pub stat_after: &'a str,
    pub look_ms: f64,
    pub hypervisor: Option<String>,
    pub pmu: &'a str,
    pub root: bool,
}

/// Reads the tree and decides. `cpu`: the CPU the run is pinned to.
pub fn inspect(tree: &Tree, cpu: Option<usize>, seen: &Observed) -> Preflight {
    let c = cpu.unwrap_or(0);
    let sys = |rel: String| tree.read(&format!("/sys/devices/system/cpu/{rel}"));
    let governor = sys(format!("cpu{c}/cpufreq/scaling_governor"));
    let (boost, boost_control) = if let Some(v) = sys("intel_pstate/no_turbo".into()) {
        (Some(v == "0"), Some("intel_pstate/no_turbo".to_string()))
    } else if let Some(v) = sys("cpufreq/boost".into()) {
        (Some(v == "1"), Some("cpufreq/boost".to_string()))
    } else if let Some(v) = sys(format!("cpufreq/policy{c}/boost")) {
        (Some(v == "1"), Some(format!("cpufreq/policy{c}/boost")))
    } else {
        (None, None)
    };
    let smt_siblings: Vec<usize> = sys(format!("cpu{c}/topology/thread_siblings_list"))
        .map(|s| cpu_list(&s).into_iter().filter(|x| *x != c).collect())
        .unwrap_or_default();
    let (a, b) = (cpu_times(seen.stat_before), cpu_times(seen.stat_after));
    let busy_pct = busy(&a, &b, cpu);
    let sibling_busy_pct = if cpu.is_some() {
        smt_siblings
            .iter()
            .filter_map(|s| busy(&a, &b, Some(*s)))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    } else {
        None
    };
    let steal_pct = match (a.get(&None), b.get(&None)) {
        (Some(x), Some(y)) if y.total > x.total => {
            Some(y.steal.saturating_sub(x.steal) as f64 / (y.total - x.total) as f64 * 100.0)
        }
        _ => None,
    };
    let perf_event_paranoid = tree
        .read("/proc/sys/kernel/perf_event_paranoid")
        .and_then(|s| s.parse().ok());
    let mut p = Preflight {
        cpu,
        governor,
        boost,
        boost_control,
        smt_siblings,
        busy_pct,
        sibling_busy_pct,
        steal_pct,
        look_ms: seen.look_ms,
        hypervisor: seen.hypervisor.clone(),
        perf_event_paranoid,
        pmu: seen.pmu.to_string(),
        warnings: Vec::new(),
    };
    p.warnings = warnings(&p, seen.root);
    p
}

/// The settings that make numbers worse, one warning each with its fix.
fn warnings(p: &Preflight, root: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    let sudo = if root { "" } else { "sudo " };
    let c = p.cpu.unwrap_or(0);
    if let Some(g) = p.governor.as_deref().filter(|g| *g != "performance") {
        w.push(Warning {
            what: format!("CPU {c}'s frequency governor is {g}: its clock follows the load, so the first samples of each operation run slower"),
            fix: format!("{sudo}cpupower frequency-set --governor performance"),
        });
    }
    if p.boost == Some(true) {
        let fix = match p.boost_control.as_deref() {
            Some("intel_pstate/no_turbo") => {
                format!("echo 1 | {sudo}tee /sys/devices/system/cpu/intel_pstate/no_turbo")
            }
            Some(f) => format!("echo 0 | {sudo}tee /sys/devices/system/cpu/{f}"),
            None => String::new(),
        };
        w.push(Warning {
            what: "turbo boost is on: the clock rises and falls with temperature and with how many cores are busy, so cycles per TSC tick drift".into(),
            fix,
        });
    }
    if let Some(s) = p.sibling_busy_pct.filter(|s| *s > BUSY_PCT) {
        w.push(Warning {
            what: format!(
                "CPU {c}'s SMT sibling ({}) was {s:.0} % busy: it shares the core's execution units and caches",
                p.smt_siblings.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
            ),
            fix: format!("pin the run to a core whose sibling is idle (--cpu N), or: echo off | {sudo}tee /sys/devices/system/cpu/smt/control"),
        });
    }
    if let Some(b) = p.busy_pct.filter(|b| *b > BUSY_PCT) {
        let whom = match p.cpu {
            Some(c) => format!("CPU {c}"),
            None => "the machine".into(),
        };
        w.push(Warning {
            what: format!("other load: {whom} was {b:.0} % busy before the run"),
            fix: "stop the other work, or pin the run to an idle CPU (--cpu N; `mpstat -P ALL 1` shows which)".into(),
        });
    }
    if let Some(s) = p.steal_pct.filter(|s| *s > STEAL_PCT) {
        w.push(Warning {
            what: format!("the hypervisor gave {s:.1} % of the CPUs' time to others (steal)"),
            fix: "a dedicated host, or a virtual machine with dedicated, pinned vCPUs".into(),
        });
    }
    if p.perf_event_paranoid.is_some_and(|x| x > 2) && !root {
        w.push(Warning {
            what: format!(
                "perf_event_paranoid is {}: the PMU's counters are refused to unprivileged users, so cycles come from the TSC",
                p.perf_event_paranoid.unwrap_or_default()
            ),
            fix: "sudo sysctl kernel.perf_event_paranoid=2".into(),
        });
    }
    w
}

/// The preflight on this machine: two readings of /proc/stat `look` apart.
pub fn run(cpu: Option<usize>, look: std::time::Duration, pmu: &str) -> Preflight {
    let stat = || std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let t = std::time::Instant::now();
    let before = stat();
    std::thread::sleep(look);
    let after = stat();
    let seen = Observed {
        stat_before: &before,
        stat_after: &after,
        look_ms: t.elapsed().as_secs_f64() * 1e3,
        hypervisor: crate::env::hypervisor(),
        pmu,
        // SAFETY: geteuid has no preconditions.
        root: unsafe { libc::geteuid() } == 0,
    };
    inspect(&Tree::new(Path::new("/")), cpu, &seen)
}

/// One line per finding, for people: what was read, then the warnings with their fixes.
pub fn lines(p: &Preflight) -> Vec<String> {
    let opt = |o: &Option<String>, none: &str| o.clone().unwrap_or_else(|| none.to_string());
    let pct = |o: Option<f64>| o.map_or("unknown".to_string(), |x| format!("{x:.0} %"));
    let mut out = vec![
        format!(
            "CPU: {}",
            p.cpu
                .map_or("not pinned (the machine as a whole)".to_string(), |c| c.to_string())
        ),
        format!(
            "governor: {}",
            opt(&p.governor, "none exposed (no cpufreq: the host or firmware decides)")
        ),
        format!(
            "turbo/boost: {}",
            match p.boost {
                Some(true) => "on".to_string(),
                Some(false) => "off".to_string(),
                None => "not exposed".to_string(),
            }
        ),
        format!(
            "SMT siblings: {}",
            if p.smt_siblings.is_empty() {
                "none".to_string()
            } else {
                format!(
                    "{} (busiest {})",
                    p.smt_siblings
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    pct(p.sibling_busy_pct)
                )
            }
        ),
        format!("load over {:.0} ms: {}", p.look_ms, pct(p.busy_pct)),
        format!(
            "hypervisor: {}; steal {}",
            opt(&p.hypervisor, "none"),
            p.steal_pct.map_or("unknown".to_string(), |x| format!("{x:.1} %"))
        ),
        format!(
            "perf_event_paranoid: {}; PMU core cycles: {}",
            p.perf_event_paranoid.map_or("unknown".to_string(), |x| x.to_string()),
            p.pmu
        ),
    ];
    for w in &p.warnings {
        out.push(format!("warning: {} — fix: {}", w.what, w.fix));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Tree {
        Tree::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/preflight").join(name))
    }

    fn stat(tree: &str, which: &str) -> String {
        fixture(tree).read(&format!("proc/stat.{which}")).unwrap()
    }

    fn look(tree: &str, cpu: Option<usize>, root: bool) -> Preflight {
        let (a, b) = (stat(tree, "before"), stat(tree, "after"));
        let seen = Observed {
            stat_before: &a,
            stat_after: &b,
            look_ms: 200.0,
            hypervisor: None,
            pmu: "available",
            root,
        };
        inspect(&fixture(tree), cpu, &seen)
    }

    fn fixes(p: &Preflight) -> Vec<&str> {
        p.warnings.iter().map(|w| w.fix.as_str()).collect()
    }

    #[test]
    fn stat_lines_and_cpu_lists_parse() {
        let t = cpu_times("cpu  10 1 5 80 4 0 0 0 0 0\ncpu3 1 2 3 4 5 6 7 8 9 10\nintr 1 2\ncpuX 1\n");
        assert_eq!(
            t[&None],
            Times {
                total: 100,
                idle: 84,
                steal: 0
            }
        );
        assert_eq!(
            t[&Some(3)],
            Times {
                total: 36,
                idle: 9,
                steal: 8
            }
        );
        assert_eq!(t.len(), 2);
        assert_eq!(cpu_list("0-2,8,10-11\n"), vec![0, 1, 2, 8, 10, 11]);
        assert_eq!(cpu_list("5"), vec![5]);
    }

    /// A laptop-like Intel machine: powersave governor, turbo on (intel_pstate), SMT with
    /// CPU 4 as CPU 0's sibling, the sibling busy; unprivileged with paranoid 4.
    #[test]
    fn intel_turbo_powersave_and_a_busy_sibling() {
        let p = look("intel-turbo-powersave", Some(0), false);
        assert_eq!(p.governor.as_deref(), Some("powersave"));
        assert_eq!(
            (p.boost, p.boost_control.as_deref()),
            (Some(true), Some("intel_pstate/no_turbo"))
        );
        assert_eq!(p.smt_siblings, vec![4]);
        // CPU 4: 150 of 200 ticks busy; CPU 0: 10 of 200.
        assert_eq!(p.sibling_busy_pct, Some(75.0));
        assert_eq!(p.busy_pct, Some(5.0));
        assert_eq!(
            fixes(&p),
            vec![
                "sudo cpupower frequency-set --governor performance",
                "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo",
                "pin the run to a core whose sibling is idle (--cpu N), or: echo off | sudo tee /sys/devices/system/cpu/smt/control",
                "sudo sysctl kernel.perf_event_paranoid=2",
            ]
        );
        // Pinned to CPU 2, whose sibling (6) is idle: no sibling warning.
        let q = look("intel-turbo-powersave", Some(2), false);
        assert_eq!((q.smt_siblings.clone(), q.sibling_busy_pct), (vec![6], Some(0.0)));
        assert!(!fixes(&q).iter().any(|f| f.contains("smt/control")), "{q:?}");
    }

    /// A tuned AMD server: performance governor, boost off (cpufreq/boost), no SMT
    /// sibling, idle, as root: nothing to warn about.
    #[test]
    fn a_tuned_amd_server_has_nothing_to_warn_about() {
        let p = look("amd-tuned", Some(1), true);
        assert_eq!(p.governor.as_deref(), Some("performance"));
        assert_eq!(
            (p.boost, p.boost_control.as_deref()),
            (Some(false), Some("cpufreq/boost"))
        );
        assert!(p.smt_siblings.is_empty());
        assert_eq!(p.warnings, vec![]);
    }

    /// Our CI guest's layout (2 vCPUs, KVM: no cpufreq, SMT not supported, no turbo
    /// control), not pinned, with one vCPU's worth of other load and 4 % steal over the look.
    #[test]
    fn a_virtual_machine_busy_and_robbed() {
        let p = look("kvm-guest", None, true);
        assert_eq!((p.governor.clone(), p.boost), (None, None));
        assert!(p.smt_siblings.is_empty());
        assert_eq!(p.busy_pct, Some(50.0));
        assert_eq!(p.steal_pct, Some(4.0));
        let what: Vec<&str> = p.warnings.iter().map(|w| w.what.as_str()).collect();
        assert_eq!(
            what,
            vec![
                "other load: the machine was 50 % busy before the run",
                "the hypervisor gave 4.0 % of the CPUs' time to others (steal)",
            ]
        );
    }

    /// amd-pstate's per-policy boost file, when the global one is absent.
    #[test]
    fn per_policy_boost_is_read() {
        let p = look("amd-pstate-policy-boost", Some(3), true);
        assert_eq!(
            (p.boost, p.boost_control.as_deref()),
            (Some(true), Some("cpufreq/policy3/boost"))
        );
        assert_eq!(p.governor.as_deref(), Some("schedutil"));
        assert_eq!(
            fixes(&p),
            vec![
                "cpupower frequency-set --governor performance",
                "echo 0 | tee /sys/devices/system/cpu/cpufreq/policy3/boost"
            ]
        );
    }
}
