//! Scale-out under a real Slurm: a single-node cluster from Debian's packages (munged,
//! slurmctld, slurmd, configured in a temporary directory), a throwaway PostgreSQL, and
//! README's `scripts/slurm.sh`. An array of 4 shards runs; one task is cancelled mid-run and
//! resubmitted; the report job waits for it; the group holds every row exactly once, and
//! what the cancelled task stored is kept as it was.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "common/pg.rs"]
mod pg;

/// The repository's root (README.md, scripts/).
fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A free loopback TCP port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A single-node Slurm cluster of our own: its munged, slurmctld and slurmd run from a
/// temporary directory on free ports, and are stopped (with every job) when dropped.
struct Cluster {
    dir: tempfile::TempDir,
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// One of Slurm's commands, talking to this cluster.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf());
        c
    }

    fn start() -> Result<Cluster, String> {
        for p in [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "squeue",
            "scancel",
            "scontrol",
            "sinfo",
        ] {
            let found = std::env::var_os("PATH")
                .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
                || Path::new("/usr/sbin").join(p).is_file();
            if !found {
                return Err(format!("{p} is not installed"));
            }
        }
        let c = Cluster {
            dir: tempfile::tempdir().map_err(|e| e.to_string())?,
        };
        let d = c.dir.path();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).map_err(|e| e.to_string())?;
        }
        // munged: a key of its own, a socket of its own; the machine's munge is not touched.
        let mut key = vec![0u8; 1024];
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut key))
            .map_err(|e| e.to_string())?;
        let key_file = d.join("munge/key");
        std::fs::write(&key_file, key).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).map_err(|e| e.to_string())?;
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
        let socket = d.join("munge/socket");
        let ok = Command::new("munged")
            .arg("--force")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key_file.display()))
            .arg(format!("--log-file={}", d.join("log/munged.log").display()))
            .arg(format!("--pid-file={}", d.join("munge/pid").display()))
            .arg(format!("--seed-file={}", d.join("munge/seed").display()))
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err("munged did not start".into());
        }
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map_err(|e| e.to_string())?;
        let host = host.trim().split('.').next().unwrap_or("localhost").to_string();
        // In a container: no cgroups to track or bind tasks with, no accounting database.
        let conf = format!(
            "ClusterName=cryptoscope\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={}\nSlurmdPort={}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\nSlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\nSlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\nMpiDefault=none\nReturnToService=2\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nSchedulerType=sched/backfill\nMinJobAge=3600\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={} State=UNKNOWN\n\
             PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            socket.display(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            d = d.display(),
        );
        std::fs::write(c.conf(), conf).map_err(|e| e.to_string())?;
        for daemon in ["slurmctld", "slurmd"] {
            let mut cmd = c.cmd(daemon);
            cmd.arg("-f").arg(c.conf());
            if daemon == "slurmctld" {
                cmd.arg("-i"); // a fresh state directory: nothing to recover
            }
            if !cmd.status().is_ok_and(|s| s.success()) {
                return Err(format!("{daemon} did not start: {}", c.log(daemon)));
            }
        }
        // Ready when the node is idle.
        let start = Instant::now();
        loop {
            let o = c
                .cmd("sinfo")
                .args(["-h", "-o", "%T"])
                .output()
                .map_err(|e| e.to_string())?;
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                return Ok(c);
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(format!("the node is not idle after 60 s: {}", c.log("slurmd")));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log(&self, daemon: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("log/{daemon}.log"))).unwrap_or_default()
    }

    /// Whether job `id` (`12`, `12_3`) is still pending or running.
    fn queued(&self, id: &str) -> bool {
        let o = self.cmd("squeue").args(["-h", "-j", id, "-o", "%T"]).output().unwrap();
        !String::from_utf8_lossy(&o.stdout).trim().is_empty()
    }

    /// Polls until job `id` has left the queue.
    fn wait_gone(&self, id: &str, limit: Duration) {
        let start = Instant::now();
        while self.queued(id) {
            assert!(
                start.elapsed() < limit,
                "job {id} still queued after {limit:?}: {}",
                self.log("slurmctld")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The exit status Slurm recorded for job `id` (`ExitCode=0:0` is success).
    fn exit_code(&self, id: &str) -> String {
        let o = self.cmd("scontrol").args(["show", "job", id]).output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .find_map(|w| w.strip_prefix("ExitCode="))
            .unwrap_or("none")
            .to_string()
    }

    fn pid(&self, file: &str) -> Option<i32> {
        std::fs::read_to_string(self.dir.path().join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.cmd("scancel").args(["--user", "root"]).status();
        let mut pids = Vec::new();
        for f in ["slurmd.pid", "slurmctld.pid", "munge/pid"] {
            if let Some(p) = self.pid(f) {
                // SAFETY: kill has no memory preconditions; the pid is our daemon's.
                unsafe { libc::kill(p, libc::SIGTERM) };
                pids.push(p);
            }
        }
        let start = Instant::now();
        while pids.iter().any(|p| Path::new(&format!("/proc/{p}")).exists())
            && start.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `scripts/slurm.sh ARGS` against `cluster`, with the vectors for the tasks.
fn script(cluster: &Cluster, args: &[&str]) -> Output {
    let mut c = cluster.cmd("bash");
    c.arg(root().join("scripts/slurm.sh"))
        .args(args)
        .env("CRYPTOSCOPE_VECTORS", vectors())
        .env_remove("CRYPTOSCOPE_DB");
    c.output().unwrap()
}

/// One value per line of a psql query (unaligned, no headers).
fn psql(server: &pg::PgServer, sql: &str) -> Vec<String> {
    let o = server
        .client("psql")
        .args(["-tA", "-F", "|", "-c", sql])
        .output()
        .unwrap();
    assert!(o.status.success(), "psql: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).lines().map(String::from).collect()
}

/// The runs of `group`: shard (`2/4`), id, status and stored rows.
fn shards(server: &pg::PgServer, group: &str) -> Vec<(String, String, String, usize)> {
    psql(
        server,
        &format!(
            "SELECT r.command, r.id, r.status, (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id)
             FROM runs r WHERE r.run_group = '{group}' ORDER BY r.started_at"
        ),
    )
    .into_iter()
    .map(|l| {
        let f: Vec<&str> = l.split('|').collect();
        let command: Vec<String> = serde_json::from_str(f[0]).unwrap();
        let shard = command
            .iter()
            .skip_while(|a| *a != "--shard")
            .nth(1)
            .cloned()
            .unwrap_or_default();
        (shard, f[1].to_string(), f[2].to_string(), f[3].parse().unwrap())
    })
    .collect()
}

/// The job ids the script recorded in DIR/jobs: the array's, and the latest report job's.
fn jobs(dir: &Path) -> (String, String) {
    let t = std::fs::read_to_string(dir.join("jobs")).unwrap();
    let last = |what: &str| {
        t.lines()
            .rev()
            .find_map(|l| l.strip_prefix(&format!("{what} ")))
            .unwrap()
            .to_string()
    };
    (last("array"), last("report"))
}

/// The (subject, operation) keys of a group's export, each checked to appear once.
fn exported(server: &pg::PgServer, reference: &str) -> Vec<(String, String)> {
    let o = cryptoscope()
        .args(["export", reference, "--format", "json", "--db", &server.url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut keys: Vec<(String, String)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["subject"].as_str().unwrap().into(),
                r["operation"].as_str().unwrap().into(),
            )
        })
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "{reference}: a row stored twice");
    keys
}

const RUN_ARGS: &[&str] = &["--quick", "--alg", "ML-KEM-512", "--alg", "X25519", "--samples", "8000"];

/// `scripts/slurm.sh submit` of 4 shards of [`RUN_ARGS`] into `group`, files in `dir`.
fn submit(cluster: &Cluster, server: &pg::PgServer, group: &str, dir: &Path, more: &[&str]) {
    let bin = bin();
    let mut args = vec!["submit", "--shards", "4", "--group", group, "--db", &server.url];
    args.extend(more);
    args.extend(["--dir", dir.to_str().unwrap(), "--bin", bin.to_str().unwrap(), "--"]);
    args.extend(RUN_ARGS);
    let o = script(cluster, &args);
    assert!(o.status.success(), "{}", text(&o));
}

/// A shard's rows: (subject and operation, samples, raw nanoseconds in storage order).
type ShardRows = Vec<(String, usize, String)>;

fn rows_of(server: &pg::PgServer, run: &str) -> ShardRows {
    let sql = format!(
        "SELECT s.subject || ' ' || x.operation, x.samples, encode(m.ns, 'hex')
         FROM results x JOIN subjects s ON s.id = x.subject_id
         JOIN samples m ON m.run_id = x.run_id AND m.subject_id = x.subject_id AND m.operation = x.operation
         WHERE x.run_id = '{run}' ORDER BY 1"
    );
    psql(server, &sql)
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2].to_string())
        })
        .collect()
}

/// Stops shard `k` of `group`'s `array` with `scontrol`/`scancel` ARGS once it has stored
/// its first rows, before it ends; its run id and what it had stored.
fn stop_mid_run(
    cluster: &Cluster,
    server: &pg::PgServer,
    (group, array, k): (&str, &str, usize),
    stop: &[&str],
) -> (String, ShardRows) {
    let shard = format!("{k}/4");
    let task = format!("{array}_{k}");
    let running = || shards(server, group).into_iter().find(|s| s.0 == shard);
    let start = Instant::now();
    let stopped = loop {
        if let Some((_, id, status, rows)) = running() {
            assert_eq!(
                status, "running",
                "shard {shard} ended before it could be stopped: give it more work"
            );
            if rows > 0 {
                let o = cluster.cmd(stop[0]).args(&stop[1..]).arg(&task).output().unwrap();
                assert!(o.status.success(), "{stop:?}: {}", text(&o));
                break id;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "shard {shard} stored nothing in 300 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let kept = rows_of(server, &stopped);
    assert!(
        !kept.is_empty() && (kept.len() < 7 || kept.iter().any(|r| r.1 < 8000)),
        "shard {shard} stopped mid-run: {kept:?}"
    );
    (stopped, kept)
}

/// Every row of `run` holds the 8000 samples asked for, not one more (nothing measured
/// twice), and starts with the samples it held when its task was stopped (`kept`).
fn whole_and_kept(server: &pg::PgServer, run: &str, kept: &ShardRows) {
    let after = rows_of(server, run);
    assert_eq!(after.len(), 7, "{after:?}");
    assert!(after.iter().all(|r| r.1 == 8000), "{after:?}");
    for (key, _, ns) in kept {
        let now = &after.iter().find(|r| &r.0 == key).unwrap().2;
        assert!(
            now.starts_with(ns.as_str()),
            "{key}: the samples stored before the stop are gone"
        );
    }
}

/// Resubmits shard 2; out of range and while queued, `resume` is refused.
fn resume_shard_two(cluster: &Cluster, dir: &str) {
    let o = script(cluster, &["resume", dir, "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o).trim(),
        "error: shard 5 is out of range: the array has shards 1 to 4"
    );
    let o = script(cluster, &["resume", dir, "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("shard 2/4 of group nightly: job "), "{}", text(&o));
    let o = script(cluster, &["resume", dir, "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).starts_with("error: shard 2 is still "), "{}", text(&o));
}

/// Bad input to `submit`: one line, exit 2, nothing submitted or written; and the tool
/// itself refuses a group of another command line.
fn bad_input(cluster: &Cluster, server: &pg::PgServer, tmp: &Path) {
    let dir = tmp.join("array3");
    let d = dir.to_str().unwrap();
    let bin = bin();
    let b = bin.to_str().unwrap();
    let unreachable = "postgresql://cryptoscope@127.0.0.1:1/postgres";
    for (args, says) in [
        (
            vec!["submit", "--db", unreachable, "--dir", d, "--bin", b],
            "error: cannot open results database",
        ),
        (
            vec![
                "submit",
                "--group",
                "nightly",
                "--db",
                &server.url,
                "--dir",
                d,
                "--bin",
                b,
            ],
            "error: group nightly already holds runs",
        ),
        (
            vec!["submit", "--shards", "0", "--db", &server.url, "--dir", d, "--bin", b],
            "error: --shards 0",
        ),
        (
            vec!["submit", "--db", "postgresql://u:secret@h/db", "--dir", d, "--bin", b],
            "error: --db holds a password",
        ),
    ] {
        let o = script(cluster, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert_eq!(text(&o).trim().lines().count(), 1, "{args:?}: {}", text(&o));
        assert!(text(&o).starts_with(says), "{args:?}: {}", text(&o));
        assert!(!dir.exists(), "{args:?} wrote {d}");
    }
    let o = cryptoscope()
        .args([
            "run",
            "--quick",
            "--alg",
            "X25519",
            "--shard",
            "1/4",
            "--group",
            "nightly",
            "--db",
            &server.url,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).starts_with("error: group nightly holds run "), "{}", text(&o));
    assert_eq!(shards(server, "nightly").len(), 4);
}

#[test]
fn a_job_array_with_a_cancelled_and_resubmitted_shard_stores_every_row_once() {
    let _serial = serial(); // starts daemons, binds ports
    if !cryptoscope_testkit::needs_root("a Slurm cluster (slurmd runs jobs as their users)") {
        return;
    }
    let Some(server) = pg::or_skip(pg::PgServer::start()) else {
        return;
    };
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            cryptoscope_testkit::needs_setup(&format!("a single-node Slurm ({why})"));
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("array");
    submit(&cluster, &server, "nightly", &dir, &[]);
    let (array, first_report) = jobs(&dir);
    let (cancelled, kept) = stop_mid_run(&cluster, &server, ("nightly", &array, 2), &["scancel"]);
    cluster.wait_gone(&format!("{array}_2"), Duration::from_secs(60));
    let two = shards(&server, "nightly").into_iter().find(|s| s.0 == "2/4").unwrap();
    assert_eq!(two.2, "running", "the cancelled shard is unfinished");
    resume_shard_two(&cluster, dir.to_str().unwrap());

    // The report job waits for the resubmitted shard, then says the group is whole.
    let (_, report) = jobs(&dir);
    cluster.wait_gone(&first_report, Duration::from_secs(600));
    cluster.wait_gone(&report, Duration::from_secs(600));
    let said = std::fs::read_to_string(dir.join("report.out")).unwrap();
    assert!(said.contains("4 of 4 complete"), "{said}");
    assert_eq!(cluster.exit_code(&report), "0:0", "the report job succeeds: {said}");
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        page.contains("8 of 8 subjects passed"),
        "every subject of the group in its report"
    );

    // Four runs, shard 2 still the cancelled one (continued under its id), all complete.
    let runs = shards(&server, "nightly");
    let mut seen: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    seen.sort();
    assert_eq!(seen, ["1/4", "2/4", "3/4", "4/4"], "{runs:?}");
    assert!(runs.iter().all(|r| r.2 == "complete"), "{runs:?}");
    assert_eq!(runs.iter().find(|r| r.0 == "2/4").unwrap().1, cancelled);
    whole_and_kept(&server, &cancelled, &kept);
    // ML-KEM-512: 5 implementations x 3 operations; X25519: 3 x 4 (tests/postgres.rs).
    let keys = exported(&server, "group:nightly");
    assert_eq!(keys.len(), 27, "{keys:?}");

    // A second array, shards sharing the node; compare works across the two groups.
    let dir2 = tmp.path().join("array2");
    submit(&cluster, &server, "nightly2", &dir2, &["--shared"]);
    // Shard 3 requeued mid-run (as after a node failure): Slurm runs the same task again,
    // which continues the shard's run. Slurm holds a requeued job back (BeginTime, about
    // two minutes here): released at once.
    let (array2, report2) = jobs(&dir2);
    let (requeued, kept) = stop_mid_run(&cluster, &server, ("nightly2", &array2, 3), &["scontrol", "requeue"]);
    // Released once it is pending for its BeginTime (a release before that is undone by
    // the requeue): polled.
    let task = format!("{array2}_3");
    let start = Instant::now();
    loop {
        let o = cluster
            .cmd("squeue")
            .args(["-h", "-j", &task, "-o", "%T %r"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stdout).trim() == "PENDING BeginTime" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{task} not pending again after a requeue"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = cluster
        .cmd("scontrol")
        .args(["update", &format!("JobId={task}"), "StartTime=now"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    cluster.wait_gone(&report2, Duration::from_secs(600));
    let three = shards(&server, "nightly2").into_iter().find(|s| s.0 == "3/4").unwrap();
    assert_eq!((three.1.as_str(), three.2.as_str()), (requeued.as_str(), "complete"));
    whole_and_kept(&server, &requeued, &kept);
    let log = std::fs::read_to_string(dir2.join("shard-3.out")).unwrap();
    assert!(log.contains("did not finish: continuing it"), "{log}");
    assert_eq!(exported(&server, "group:nightly2"), keys);
    let o = cryptoscope()
        .args(["compare", "group:nightly", "group:nightly2", "--db", &server.url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // Every operation of the one group against the other's: the verdicts add up to 27.
    let tally = text(&o).lines().find(|l| l.contains(" slower, ")).map(|l| {
        l.split(", ")
            .filter_map(|part| part.split_whitespace().next()?.parse::<usize>().ok())
            .sum::<usize>()
    });
    assert_eq!(tally, Some(27), "{}", text(&o));

    bad_input(&cluster, &server, tmp.path());

    // Stopped: no daemon of the cluster is left (polled; 30 s is a bound, not a wait).
    let d = cluster.dir.path().display().to_string();
    let pattern = format!("[{}]{}", &d[..1], &d[1..]);
    drop(cluster);
    let start = Instant::now();
    while !leftovers("no-namespace-of-this-test", &pattern).is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(leftovers("no-namespace-of-this-test", &pattern), "");
}

#[test]
fn readme_presents_the_script_this_test_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for line in ["scripts/slurm.sh submit", "scripts/slurm.sh resume"] {
        assert!(readme.contains(line), "README.md lacks `{line}`");
    }
}
