//! Run groups: the shards of one sharded run (a Slurm array, a CI matrix), the machines
//! they ran on, and loading a group as runs, one per machine type.
//!
//! A group's shards are merged into one run only where they ran on one machine type (one
//! CPU model): figures from different machines are never shown as one machine's. A group
//! that spans machine types loads as one part per type (`group:NAME@CPU MODEL`), and
//! `group:NAME@TEXT` picks the part whose CPU model or host name holds TEXT.

use crate::{Store, StoreError};
use cryptoscope_model::RunFile;

/// One run of a group, with its machine and what it stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub id: String,
    pub started_at: String,
    /// `running` (also a run that was killed), `complete`, …
    pub status: String,
    /// The stored (scrubbed) command line.
    pub command: Vec<String>,
    pub hostname: String,
    pub cpu_model: String,
    /// Stored (subject, operation) rows.
    pub results: usize,
    /// Rows whose subject failed its gate, crashed or timed out.
    pub failed: usize,
}

impl Member {
    /// The machine type the member ran on: machines of one CPU model are one type.
    pub fn machine(&self) -> &str {
        &self.cpu_model
    }

    fn matches(&self, text: &str) -> bool {
        let t = text.to_lowercase();
        self.cpu_model.to_lowercase().contains(&t) || self.hostname.to_lowercase().contains(&t)
    }
}

/// The machine types of `members`, in order of first start, each with its members' ids.
pub fn machine_types(members: &[Member]) -> Vec<(String, Vec<String>)> {
    let mut types: Vec<(String, Vec<String>)> = Vec::new();
    for m in members {
        match types.iter_mut().find(|(t, _)| t == m.machine()) {
            Some((_, ids)) => ids.push(m.id.clone()),
            None => types.push((m.machine().to_string(), vec![m.id.clone()])),
        }
    }
    types
}

impl Store {
    /// The runs of group `group`, oldest first (none: an empty list).
    pub fn group_members(&mut self, group: &str) -> Result<Vec<Member>, StoreError> {
        let rows = self.db.query(
            "SELECT r.id, r.started_at, r.status, r.command, COALESCE(e.hostname, '?'), COALESCE(e.cpu_model, '?'),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id AND x.gate IN ('fail', 'crashed', 'timeout'))
             FROM runs r JOIN environments e ON e.id = r.environment_id
             WHERE r.run_group = ?1 ORDER BY r.started_at, r.id",
            &[group.into()],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| Member {
                id: r[0].text().unwrap_or_default(),
                started_at: r[1].text().unwrap_or_default(),
                status: r[2].text().unwrap_or_default(),
                command: serde_json::from_str(&r[3].text().unwrap_or_default()).unwrap_or_default(),
                hostname: r[4].text().unwrap_or_default(),
                cpu_model: r[5].text().unwrap_or_default(),
                results: r[6].int().unwrap_or(0) as usize,
                failed: r[7].int().unwrap_or(0) as usize,
            })
            .collect())
    }

    /// The members a `group:` reference names (`NAME` or `NAME@TEXT`), and the name
    /// shown for them. A group whose own name holds `@` is found under that name first.
    fn members_of(&mut self, reference: &str) -> Result<(String, Option<String>, Vec<Member>), StoreError> {
        let whole = self.group_members(reference)?;
        if !whole.is_empty() {
            return Ok((reference.to_string(), None, whole));
        }
        let Some((group, text)) = reference.rsplit_once('@') else {
            return Err(StoreError::NoSuchRun(format!("group:{reference}")));
        };
        let members = self.group_members(group)?;
        if members.is_empty() {
            return Err(StoreError::NoSuchRun(format!("group:{group}")));
        }
        let picked: Vec<Member> = members.iter().filter(|m| m.matches(text)).cloned().collect();
        if picked.is_empty() {
            return Err(StoreError::NoSuchMachine {
                group: group.to_string(),
                text: text.to_string(),
                types: describe(&members),
            });
        }
        Ok((group.to_string(), Some(text.to_string()), picked))
    }

    /// A group's runs merged per machine type, in order of first start: one run when the
    /// shards ran on one type (`group:NAME`), else one per type (`group:NAME@CPU MODEL`).
    pub fn load_group_parts(&mut self, reference: &str) -> Result<Vec<RunFile>, StoreError> {
        let (group, picked, members) = self.members_of(reference)?;
        let types = machine_types(&members);
        let mut parts = Vec::new();
        for (machine, ids) in &types {
            let mut merged: Option<RunFile> = None;
            for id in ids {
                let shard = self.load_run(id)?;
                match merged.as_mut() {
                    None => merged = Some(shard),
                    Some(m) => {
                        m.results.extend(shard.results);
                        m.applications.extend(shard.applications);
                        m.finished_at = m.finished_at.clone().max(shard.finished_at);
                    }
                }
            }
            let mut merged = merged.expect("a machine type has a member");
            merged.run_id = match (types.len(), &picked) {
                (1, None) => format!("group:{group}"),
                (1, Some(text)) => format!("group:{group}@{text}"),
                _ => format!("group:{group}@{machine}"),
            };
            parts.push(merged);
        }
        Ok(parts)
    }

    /// A reference as the runs it stands for: a run alone, or a group's parts per machine
    /// type ([`Store::load_group_parts`]).
    pub fn load_all(&mut self, reference: &str) -> Result<Vec<RunFile>, StoreError> {
        match reference.strip_prefix("group:") {
            Some(g) => self.load_group_parts(g),
            None => Ok(vec![self.load_run(reference)?]),
        }
    }

    /// A group reference as one run: refused, naming the types, when its shards ran on
    /// more than one machine type.
    pub(crate) fn load_group(&mut self, reference: &str) -> Result<RunFile, StoreError> {
        let mut parts = self.load_group_parts(reference)?;
        if parts.len() > 1 {
            let (group, _, members) = self.members_of(reference)?;
            return Err(StoreError::ManyMachines {
                group,
                types: describe(&members),
            });
        }
        Ok(parts.remove(0))
    }
}

/// "AMD EPYC 7B13 (2 runs), Intel Xeon … (1 run)".
fn describe(members: &[Member]) -> String {
    machine_types(members)
        .iter()
        .map(|(t, ids)| format!("{t} ({} run{})", ids.len(), if ids.len() == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ")
}
