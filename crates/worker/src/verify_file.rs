//! `verify-file`: one subject against a vector file brought by the user. The parent has
//! already recognised and parsed the file (a malformed one never reaches a worker); the
//! worker parses it again, checks that it is what the parent said, and runs it.

use cryptoscope_catalogue::external::{self, External, FileOutcome, Format};
use cryptoscope_catalogue::Subject;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `file` (of `format`) against `subject`; ML-KEM keys are read from `keys_in` and the
/// keys the subject derived are written to `keys_out`.
pub fn run(
    subject: &Subject,
    file: &Path,
    format: &str,
    keys_in: Option<&Path>,
    keys_out: Option<&Path>,
) -> Result<FileOutcome, String> {
    let want = Format::parse(format).ok_or_else(|| format!("unknown vector file format `{format}`"))?;
    let parsed = external::load(file).map_err(|e| e.to_string())?;
    if parsed.format() != want {
        return Err(format!(
            "{} is a {} file, not {format}",
            file.display(),
            parsed.format().as_str()
        ));
    }
    let id = &subject.descriptor().id;
    let wrong = || format!("{id} cannot run a {format} file");
    Ok(match (&parsed, subject) {
        (External::Hash { records, .. }, Subject::Hash(h)) => external::run_hash(h.as_ref(), records),
        (External::Kem { records, .. }, Subject::Kem(k)) => external::run_kem_kat(k.as_ref(), records),
        (External::X25519(tests), Subject::Kex(k)) | (External::P256(tests), Subject::Kex(k)) => {
            external::run_dh(k.as_ref(), tests)
        }
        (External::Mlkem(tests), Subject::Kem(k)) => {
            let keys = keys_in.map(read_keys).transpose()?;
            let (outcome, derived) = external::run_mlkem(k.as_ref(), tests, keys.as_ref());
            if let Some(p) = keys_out {
                let text: BTreeMap<u64, String> = derived.iter().map(|(k, v)| (*k, hex::encode(v))).collect();
                let text = serde_json::to_string(&text).map_err(|e| e.to_string())?;
                std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            }
            outcome
        }
        (External::Aead { algorithm, tests }, Subject::Aead(a)) => external::run_aead(a.as_ref(), algorithm, tests),
        _ => return Err(wrong()),
    })
}

fn read_keys(p: &Path) -> Result<BTreeMap<u64, Vec<u8>>, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    let map: BTreeMap<u64, String> =
        serde_json::from_str(&text).map_err(|e| format!("malformed key file {}: {e}", p.display()))?;
    map.into_iter()
        .map(|(k, v)| {
            hex::decode(&v)
                .map(|b| (k, b))
                .map_err(|e| format!("malformed key file {}: tcId {k}: {e}", p.display()))
        })
        .collect()
}
