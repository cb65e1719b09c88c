//! `cryptoscope group NAME`: the shards of a run group, which are complete, unfinished,
//! failed or missing, and the machines they ran on. The last job of a Slurm array runs it
//! after the report, so that the array says what it lacks.

use crate::args::DbArg;
use crate::context::Ctx;
use crate::run::shards::identity;
use crate::stored::open_store;
use crate::ui::usage;
use anyhow::Result;
use cryptoscope_report::table;
use cryptoscope_store::{machine_types, Member};

/// What a group holds against the shards its command asked for.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Tally {
    /// Shards of the count, 1-based, with no run in the group.
    pub(crate) missing: Vec<usize>,
    /// Shards (or run ids, for unsharded runs) started and not finished.
    pub(crate) unfinished: Vec<String>,
    /// Shards with a subject that failed its gate, crashed or timed out.
    pub(crate) failed: Vec<String>,
    pub(crate) complete: usize,
    /// The shard count: the commands', or `expected` when none says.
    pub(crate) count: usize,
}

/// The shard a member ran, as people read it: `2/4`, or `-` for an unsharded run.
fn shard_of(m: &Member) -> String {
    identity(&m.command)
        .shard
        .map_or_else(|| "-".into(), |(k, n)| format!("{k}/{n}"))
}

/// Counts `members` against `expected` shards (or the count their commands give).
pub(crate) fn tally(members: &[Member], expected: Option<usize>) -> Result<Tally> {
    let counts: Vec<usize> = members
        .iter()
        .filter_map(|m| identity(&m.command).shard.map(|s| s.1))
        .collect();
    let stored = counts.first().copied();
    if let (Some(e), Some(s)) = (expected, stored) {
        if e != s {
            return Err(usage(format!("--shards {e}: the group's runs are shards of {s}")));
        }
    }
    let count = stored.or(expected).unwrap_or(1);
    let mut t = Tally {
        count,
        ..Tally::default()
    };
    let label = |m: &Member| match identity(&m.command).shard {
        Some((k, _)) => k.to_string(),
        None => m.id.clone(),
    };
    let done = |m: &Member| m.status == "complete";
    for k in 1..=count {
        let of_k: Vec<&Member> = members
            .iter()
            .filter(|m| identity(&m.command).shard.map_or(count == 1, |s| s.0 == k))
            .collect();
        match of_k.iter().find(|m| done(m)).or(of_k.last()) {
            None => t.missing.push(k),
            Some(m) if !done(m) => t.unfinished.push(label(m)),
            Some(m) => {
                t.complete += 1;
                if m.failed > 0 {
                    t.failed.push(label(m));
                }
            }
        }
    }
    Ok(t)
}

/// `cryptoscope group NAME [--shards N]`: exit 0 when every shard is complete and passed
/// its gates, 1 when one is missing, unfinished or failed, 2 for bad input.
pub fn cmd_group(ctx: &Ctx, name: &str, expected: Option<usize>, db: &DbArg) -> Result<i32> {
    if expected == Some(0) {
        return Err(usage("--shards must be at least 1"));
    }
    let name = name.strip_prefix("group:").unwrap_or(name);
    let mut store = open_store(ctx, db)?;
    let members = store.group_members(name).map_err(|e| usage(e.to_string()))?;
    if members.is_empty() {
        return Err(usage(format!(
            "no run in group {name} in {} (`cryptoscope runs` lists the groups)",
            store.location()
        )));
    }
    let t = tally(&members, expected)?;
    let rows: Vec<Vec<String>> = members
        .iter()
        .map(|m| {
            vec![
                shard_of(m),
                m.id.clone(),
                if m.status == "complete" {
                    "complete".into()
                } else {
                    "unfinished".into()
                },
                format!("{} ({})", m.hostname, m.cpu_model),
                m.results.to_string(),
                m.failed.to_string(),
            ]
        })
        .collect();
    outln!(
        ctx,
        "group {name}: {} of `{}` in {}",
        match t.count {
            1 => "one run".to_string(),
            n => format!("{n} shards"),
        },
        std::iter::once("cryptoscope".to_string())
            .chain(members[0].command.iter().skip(1).cloned())
            .collect::<Vec<_>>()
            .join(" "),
        store.location()
    );
    out!(
        ctx,
        "{}",
        table::render(
            &["shard", "run", "status", "machine", "results", "failed"],
            &rows,
            &[false, false, false, false, true, true]
        )
    );
    let types = machine_types(&members);
    if types.len() > 1 {
        outln!(
            ctx,
            "{} machine types, reported apart (`cryptoscope report group:{name}`: a part per type): {}",
            types.len(),
            types.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>().join("; ")
        );
    }
    let list = |v: &[String]| v.join(", ");
    let mut lacking = Vec::new();
    if !t.missing.is_empty() {
        let m: Vec<String> = t.missing.iter().map(usize::to_string).collect();
        lacking.push(format!("missing: {}", list(&m)));
    }
    if !t.unfinished.is_empty() {
        lacking.push(format!("unfinished: {}", list(&t.unfinished)));
    }
    if !t.failed.is_empty() {
        lacking.push(format!("failed a gate: {}", list(&t.failed)));
    }
    outln!(
        ctx,
        "{} of {} complete{}",
        t.complete,
        t.count,
        if lacking.is_empty() {
            String::new()
        } else {
            format!("; {}", lacking.join("; "))
        }
    );
    if !t.missing.is_empty() || !t.unfinished.is_empty() {
        outln!(
            ctx,
            "Run the same command with --shard K/{} --group {name} for each of them: what an unfinished \
             shard stored is kept.",
            t.count
        );
    }
    Ok(if lacking.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: &str, status: &str, shard: &str, failed: usize) -> Member {
        Member {
            id: id.into(),
            started_at: String::new(),
            status: status.into(),
            command: format!("cryptoscope run --quick --shard {shard}")
                .split(' ')
                .map(String::from)
                .collect(),
            hostname: "n".into(),
            cpu_model: "c".into(),
            results: 3,
            failed,
        }
    }

    #[test]
    fn a_group_says_which_shards_it_lacks() {
        let g = [
            m("a", "complete", "1/4", 0),
            m("b", "running", "2/4", 0),
            m("c", "complete", "4/4", 2),
        ];
        let t = tally(&g, None).unwrap();
        assert_eq!(t.count, 4);
        assert_eq!(t.missing, [3]);
        assert_eq!(t.unfinished, ["2"]);
        assert_eq!(t.failed, ["4"]);
        assert_eq!(t.complete, 2);
        // Shard 2 continued to the end under its id: complete.
        let g2 = [m("a", "complete", "1/2", 0), m("b", "complete", "2/2", 0)];
        assert_eq!(tally(&g2, Some(2)).unwrap().complete, 2);
        let e = tally(&g2, Some(4)).unwrap_err().to_string();
        assert_eq!(e, "--shards 4: the group's runs are shards of 2");
        // Nothing stored yet says only what was expected.
        assert_eq!(tally(&[], Some(3)).unwrap().missing, [1, 2, 3]);
    }
}
