//! `verify-file`: one subject against a vector file brought by the user. The parent has
//! already recognised and parsed the file (a malformed one never reaches a worker); the
//! worker parses it again, checks that it is what the parent said, and runs it.

use cryptoscope_catalogue::external::{self, FileOutcome, Format};
use cryptoscope_catalogue::Subject;
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
    let keys = crate::family::KeyFiles { keys_in, keys_out };
    crate::family::of(subject)
        .verify_file(&parsed, &keys)
        .unwrap_or_else(|| Err(format!("{} cannot run a {format} file", subject.descriptor().id)))
}
