//! `cryptoscope list` and `cryptoscope verify`: what can be measured here, and the gate run
//! on its own.

use crate::args::{GateArgs, SelectArgs};
use crate::catalog;
use crate::catalog::{Catalogue, Selection};
use crate::context::Ctx;
use crate::gated::{gated, GateOptions, Gated};
use crate::ui::warn_missing;
use anyhow::Result;
use cryptoscope_catalogue::descriptor::Availability;
use cryptoscope_catalogue::Descriptor;
use cryptoscope_model::GateStatus;
use cryptoscope_report::table;
use std::path::PathBuf;

/// What `list` found: the subjects selected, in the catalogue's order, and how many the
/// catalogue holds in all.
pub struct Listed {
    pub picked: Vec<Descriptor>,
    /// Every subject of the catalogue (`list --all`).
    pub everything: usize,
    /// No selection was given: `picked` is what a bare `run` measures.
    pub default: bool,
}

/// The subjects a selection picks, as `run` would pick them; nothing written but the
/// warnings about missing providers.
pub fn list(ctx: &Ctx, sel: &SelectArgs) -> Result<Listed> {
    let selection = sel.selection()?;
    let cat = Catalogue::discover(ctx)?;
    warn_missing(ctx, &cat);
    // The same selection as `run`: a bare `list` shows what a bare `run` measures.
    let mut picked = selection.pick(&cat)?;
    let everything = Selection {
        all: true,
        ..Selection::default()
    }
    .pick(&cat)?
    .len();
    picked.sort_by_key(catalog::sort_key);
    Ok(Listed {
        picked,
        everything,
        default: sel.is_default(),
    })
}

pub fn cmd_list(ctx: &Ctx, sel: &SelectArgs, json: Option<&std::path::Path>) -> Result<i32> {
    let listed = list(ctx, sel)?;
    if let Some(out) = json {
        let text = serde_json::to_string_pretty(&listed.picked)? + "\n";
        if crate::stored::write_output(ctx, out, &text)? {
            errln!(ctx, "wrote {}", out.display());
        }
        return Ok(0);
    }
    out!(ctx, "{}", listed.render());
    Ok(0)
}

impl Listed {
    /// The table and the lines under it, as `list` prints them.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self.picked.iter().map(list_row).collect();
        let mut s = table::render(
            &[
                "algorithm",
                "provider",
                "impl",
                "level",
                "pk",
                "sk",
                "ct",
                "ss",
                "version",
                "status",
            ],
            &rows,
            &[false, false, false, false, true, true, true, true, false, false],
        );
        s.push_str(&format!(
            "{} subjects; sizes in bytes (for hashes, `ss` is the digest; for block ciphers `sk` is the key and `ct` the block; for AEADs `sk` is the key and `ct` the tag; for signatures `ct` is the signature, ≤ the largest where its length varies, and `ss` says how signing draws randomness and whether it takes a context).\n",
            self.picked.len()
        ));
        if self.default {
            s.push_str(&format!(
                "These are what `cryptoscope run` measures by default; the catalogue holds {} \
                 (`list --all`, or name a suite: --suite sig, hash, cipher, aead).\n",
                self.everything
            ));
        }
        s
    }
}

/// One subject's row of the `list` table.
fn list_row(d: &Descriptor) -> Vec<String> {
    let level = match (d.nist_level, d.classical_bits) {
        (Some(l), _) => format!("L{l}"),
        (None, Some(b)) => format!("~{b}-bit"),
        _ => "-".into(),
    };
    let avail = match &d.availability {
        Availability::Available => "available".to_string(),
        Availability::Unavailable(r) => format!("unavailable: {r}"),
    };
    let ct = match &d.sig {
        _ if d.sizes.ciphertext == 0 => "-".into(),
        Some(s) if s.variable_length => format!("≤{}", d.sizes.ciphertext),
        _ => d.sizes.ciphertext.to_string(),
    };
    // A signature has no shared secret: how it signs goes in the `ss` column.
    let ss = match &d.sig {
        Some(s) if s.context => format!("{}, ctx", s.signing.as_str()),
        Some(s) => s.signing.as_str().to_string(),
        None => d.sizes.shared_secret.to_string(),
    };
    // A hash has no keys: its digest size goes in the `ss` column.
    let key = |n: usize| {
        if d.family == cryptoscope_catalogue::Family::Hash {
            "-".into()
        } else {
            n.to_string()
        }
    };
    vec![
        d.algorithm.clone(),
        d.provider.clone(),
        d.implementation.clone(),
        level,
        key(d.sizes.public_key),
        key(d.sizes.secret_key),
        ct,
        ss,
        d.provider_version.clone(),
        avail,
    ]
}

/// What `verify` found: the gate's verdict on every subject picked, with the depth and
/// the known-answer data it ran with.
pub struct Verified {
    pub gated: Gated,
    /// The KAT depth (`single`, `all`).
    pub depth: String,
    pub vectors: PathBuf,
}

impl Verified {
    /// How many subjects passed, failed, and were unavailable.
    pub fn counts(&self) -> (usize, usize, usize) {
        let of = |pass: bool, fail: bool| {
            self.gated
                .picked
                .iter()
                .filter(|d| {
                    let st = self.gated.verdict(d).status;
                    (st == GateStatus::Pass) == pass && st.is_failure() == fail
                })
                .count()
        };
        (of(true, false), of(false, true), of(false, false))
    }

    /// The table and the closing line, as `verify` prints them.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .gated
            .picked
            .iter()
            .map(|d| {
                let v = self.gated.verdict(d);
                let label = match v.status {
                    GateStatus::Pass => "PASS".to_string(),
                    GateStatus::Unavailable => "unavailable".to_string(),
                    s => s.as_str().to_uppercase(),
                };
                vec![
                    d.algorithm.clone(),
                    d.provider.clone(),
                    d.implementation.clone(),
                    label,
                    v.detail.clone(),
                ]
            })
            .collect();
        let (passed, failed, unavailable) = self.counts();
        format!(
            "{}{passed} passed, {failed} failed, {unavailable} unavailable (KAT depth: {}, vectors: {})\n",
            table::render(&["algorithm", "provider", "impl", "gate", "detail"], &rows, &[]),
            self.depth,
            self.vectors.display()
        )
    }
}

/// The gate on the subjects selected, nothing written but its progress and warnings.
pub fn verify(sel: &SelectArgs, g: &GateArgs, ctx: &Ctx) -> Result<Verified> {
    let selection = sel.selection()?;
    let gate = GateOptions::of(ctx, g, false)?;
    let (gated, pb) = gated(ctx, &gate, |cat| selection.pick(cat), |picked| picked.len() as u64)?;
    pb.finish();
    Ok(Verified {
        gated,
        depth: gate.depth.clone(),
        vectors: gate.vectors.clone(),
    })
}

/// `verify`: the table; exit 1 when a subject failed.
pub fn cmd_verify(sel: &SelectArgs, g: &GateArgs, ctx: &Ctx) -> Result<i32> {
    let v = verify(sel, g, ctx)?;
    out!(ctx, "{}", v.render());
    Ok(if v.counts().1 > 0 { 1 } else { 0 })
}
