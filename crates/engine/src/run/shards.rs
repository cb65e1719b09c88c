//! Joining a run group. A group is one command's shards: a run whose command line differs
//! from the group's is refused before anything is written; a shard the group already holds
//! is continued where it stopped (a job array's task resubmitted or requeued after a node
//! failure, a time limit or `scancel`), or, when complete, not measured again.

use crate::args::parse_shard;
use crate::ui::usage;
use anyhow::Result;
use cryptoscope_store::{Member, Store};

/// Flags that say where a run goes, not what it measures, each with a value.
const PLACE_VALUED: &[&str] = &["--db", "--json", "--group", "--name", "--memory-limit", "--shard"];
/// Flags without a value that change only what is printed.
const PLACE_PLAIN: &[&str] = &["--quiet", "-q"];

/// What a command line is to its group: its arguments after `run` without the flags that
/// say where it runs and stores, and its shard.
#[derive(Debug, PartialEq)]
pub(crate) struct Identity {
    pub(crate) args: Vec<String>,
    pub(crate) shard: Option<(usize, usize)>,
}

/// The [`Identity`] of a command line (program name first, as stored).
pub(crate) fn identity(cmd: &[String]) -> Identity {
    let tail = cmd.get(1..).unwrap_or_default();
    let after_run = tail.iter().position(|a| a == "run").map_or(tail, |i| &tail[i + 1..]);
    let mut out = Identity {
        args: Vec::new(),
        shard: None,
    };
    let mut it = after_run.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        if PLACE_VALUED.contains(&flag) {
            let value = inline.or_else(|| it.next().cloned());
            if flag == "--shard" {
                out.shard = value.and_then(|v| parse_shard(&v).ok());
            }
        } else if !PLACE_PLAIN.contains(&flag) {
            out.args.push(a.clone());
        }
    }
    out
}

/// What the group holds of this run.
#[derive(Debug, PartialEq)]
pub(crate) enum Join {
    /// Nothing: a new run.
    New,
    /// This shard, complete (its run id).
    Complete(String),
    /// This shard, started and not finished (its run id): continue it.
    Resume(String),
}

/// "shard 2/4", or "this run" for an unsharded one.
pub(crate) fn which(shard: Option<&str>) -> String {
    match shard.and_then(|s| parse_shard(s).ok()) {
        Some((k, n)) => format!("shard {k}/{n}"),
        None => "this run".into(),
    }
}

/// Looks `command` up in group `group` of `store`.
pub(crate) fn join(store: &mut Store, group: &str, command: &[String]) -> Result<Join> {
    let members = store.group_members(group).map_err(|e| usage(e.to_string()))?;
    decide(group, &members, command)
}

/// [`join`]'s verdict on a group's members.
fn decide(group: &str, members: &[Member], command: &[String]) -> Result<Join> {
    let me = identity(command);
    for m in members {
        let them = identity(&m.command);
        if them.args != me.args || them.shard.map(|s| s.1) != me.shard.map(|s| s.1) {
            let shown = |c: &[String]| {
                std::iter::once("cryptoscope")
                    .chain(c.iter().skip(1).map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return Err(usage(format!(
                "group {group} holds run {} of another command line (`{}`), not `{}`: a group is one command's \
                 shards, so give this run another --group",
                m.id,
                shown(&m.command),
                shown(command)
            )));
        }
    }
    let same: Vec<&Member> = members
        .iter()
        .filter(|m| identity(&m.command).shard == me.shard)
        .collect();
    if let Some(done) = same.iter().find(|m| m.status == "complete") {
        return Ok(Join::Complete(done.id.clone()));
    }
    Ok(match same.last() {
        Some(m) => Join::Resume(m.id.clone()),
        None => Join::New,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn member(id: &str, status: &str, command: &str) -> Member {
        Member {
            id: id.into(),
            started_at: String::new(),
            status: status.into(),
            command: cmd(command),
            hostname: "n1".into(),
            cpu_model: "cpu".into(),
            results: 0,
            failed: 0,
        }
    }

    #[test]
    fn where_a_run_goes_is_not_what_it_measures() {
        let a = identity(&cmd(
            "/opt/a/cryptoscope -q run --quick --shard 2/4 --db service=team --json /s/2.json --alg X25519",
        ));
        let b = identity(&cmd(
            "target/release/cryptoscope run --quick --shard=3/4 --group=g --quiet --db=x --alg X25519",
        ));
        assert_eq!(a.args, cmd("--quick --alg X25519"));
        assert_eq!(a.args, b.args);
        assert_eq!((a.shard, b.shard), (Some((2, 4)), Some((3, 4))));
        // What is measured, and in which order, is the command (the order decides the slices).
        let c = identity(&cmd("cryptoscope run --alg X25519 --quick --shard 2/4"));
        assert_ne!(a.args, c.args);
    }

    #[test]
    fn a_group_continues_its_shards_and_refuses_other_commands() {
        let g = [
            member("r1", "complete", "cryptoscope run --quick --shard 1/4 --json a"),
            member("r2", "running", "cryptoscope run --quick --shard 2/4 --json b"),
        ];
        let this = |s: &str| cmd(&format!("cryptoscope run --quick --shard {s} --json c"));
        assert_eq!(decide("g", &g, &this("1/4")).unwrap(), Join::Complete("r1".into()));
        assert_eq!(decide("g", &g, &this("2/4")).unwrap(), Join::Resume("r2".into()));
        assert_eq!(decide("g", &g, &this("3/4")).unwrap(), Join::New);
        assert_eq!(decide("g", &[], &this("3/4")).unwrap(), Join::New);
        // Another shard count would slice the selection differently: refused.
        let e = decide("g", &g, &this("3/5")).unwrap_err().to_string();
        assert!(e.starts_with("group g holds run r1 of another command line"), "{e}");
        let e = decide("g", &g, &cmd("cryptoscope run --shard 3/4 --alg X25519"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("(`cryptoscope run --quick --shard 1/4 --json a`)"), "{e}");
        // A shard started twice and complete the second time is complete.
        let twice = [
            member("r2", "running", "cryptoscope run --quick --shard 2/4"),
            member("r5", "complete", "cryptoscope run --quick --shard 2/4"),
        ];
        assert_eq!(decide("g", &twice, &this("2/4")).unwrap(), Join::Complete("r5".into()));
    }
}
