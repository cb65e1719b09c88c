//! Secrets kept out of everything cryptoscope records: the command line stored with a run
//! (results file, HTML report, exports, database, `show`) passes through here first.
//!
//! What counts as a secret, and becomes [`MASK`]:
//! - the password of a URL (`postgresql://user:PASSWORD@host/db` → `user:***@`);
//! - the value of a flag whose name says password, passphrase, token, secret or key-file
//!   (`--db-password X`, `--api-token=X`);
//! - the value of an assignment whose name says so, wherever it appears in an argument: an
//!   environment assignment (`PGPASSWORD=X`), a libpq keyword/value string (`host=h
//!   password='a b'`) or a URL query (`?password=X&sslmode=disable`).
//!
//! Scrubbing is idempotent and errs towards hiding too much: a masked value that was not a
//! secret costs a reader a detail, a secret that slips through costs its owner the account.
//! This module must never log, print or keep what it removes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a secret is replaced by.
pub const MASK: &str = "***";

/// Words that make a flag or variable name a secret's name (after lower-casing and with `_`
/// read as `-`).
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "token",
    "secret",
    "key-file",
    "keyfile",
];

/// Whether a flag, keyword or variable name says it holds a secret (`--db-password`,
/// `PGPASSWORD`, `api_token`, `--key-file`).
pub fn is_secret_name(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase().replace('_', "-");
    SECRET_WORDS.iter().any(|w| n.contains(w))
}

/// One argument with every secret in it masked (URL passwords and secret assignments).
pub fn scrub_text(s: &str) -> String {
    // Masking one kind can change how the other reads the text (a masked value held the
    // `://` that began a URL), so both run until nothing changes: the result is then a
    // fixed point, and scrubbing it again changes nothing. Each pass only masks more; a
    // few passes suffice (the bound is a guard, not a tuning).
    let mut cur = s.to_string();
    for _ in 0..16 {
        let next = scrub_assignments(&scrub_url_passwords(&cur));
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

/// A command line with every secret masked: the values of secret-named flags (`--password
/// X`, `--password=X`) and every secret inside an argument ([`scrub_text`]).
pub fn scrub_args<I, S>(args: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = Vec::new();
    let mut mask_next = false;
    for a in args {
        let a = a.as_ref();
        if mask_next {
            out.push(MASK.to_string());
            mask_next = false;
            continue;
        }
        // `--name VALUE`: the value is the next argument. `--name=VALUE` is an assignment
        // and is handled with the others below.
        if is_flag(a) && is_secret_name(a) {
            mask_next = true;
        }
        out.push(scrub_text(a));
    }
    out
}

/// `scheme://user:PASSWORD@host...` → `scheme://user:***@host...`, for every URL in `s`.
/// A URL's credentials end at its last `@` (before the next URL, or the end of the
/// argument), so a password holding an unencoded `@`, `/` or space is masked whole; an `@`
/// later in the URL (a query value) masks more than the password, never less.
fn scrub_url_passwords(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // This URL ends where the next one's scheme starts.
        let end = match tail.find("://") {
            Some(j) => tail[..j]
                .char_indices()
                .rev()
                .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
                .map_or(0, |(k, c)| k + c.len_utf8()),
            None => tail.len(),
        };
        let url = &tail[..end];
        match url
            .rfind('@')
            .and_then(|at| url[..at].find(':').map(|colon| (colon, at)))
        {
            Some((colon, at)) => {
                out.push_str(&url[..colon + 1]);
                out.push_str(MASK);
                out.push_str(&url[at..]);
            }
            None => out.push_str(url),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Masks the value of every `NAME=VALUE` (white space allowed around `=`, as libpq allows)
/// whose NAME is a secret's name. A value is single-quoted (libpq's `'...'` with backslash
/// escapes) or runs to the next white space; in a URL's query (a `://` earlier in the same
/// word) also to the next `&` or `#`.
fn scrub_assignments(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0; // bytes of `s` already in `out`
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'=' {
            i += 1;
            continue;
        }
        // The name before `=`, past any white space.
        let mut end = i;
        while end > 0 && bytes[end - 1] == b' ' {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && is_name_byte(bytes[start - 1]) {
            start -= 1;
        }
        if start == end || !is_secret_name(&s[start..end]) {
            i += 1;
            continue;
        }
        let word_start = s[..start].rfind(|c: char| c.is_ascii_whitespace()).map_or(0, |w| w + 1);
        let in_url = s[word_start..start].contains("://");
        // The value after `=`, past any white space.
        let mut v = i + 1;
        while v < bytes.len() && bytes[v] == b' ' && !in_url {
            v += 1;
        }
        // A quoted value, and whatever is glued to its closing quote (text libpq would
        // refuse, and which a second pass would otherwise read as a value of its own).
        let mut j = v;
        if bytes.get(v) == Some(&b'\'') {
            j += 1;
            while j < bytes.len() && bytes[j] != b'\'' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            j = (j + 1).min(bytes.len());
        }
        while j < bytes.len() && !bytes[j].is_ascii_whitespace() && !(in_url && (bytes[j] == b'&' || bytes[j] == b'#'))
        {
            j += 1;
        }
        let value_end = j;
        out.push_str(&s[copied..v]);
        if value_end > v {
            out.push_str(MASK);
        }
        copied = value_end;
        i = value_end.max(i + 1);
    }
    out.push_str(&s[copied..]);
    out
}

/// Whether an argument is a flag alone (`--db-password`, `-t`), not `--flag=value` nor text
/// that happens to start with a dash.
fn is_flag(a: &str) -> bool {
    let name = a.trim_start_matches('-');
    a.len() > name.len()
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'
}

/// The command line a run records: scrubbed when made, and again when read back, so no
/// value of this type — in a results file, the database or a report — holds a secret, even
/// one written by a version of cryptoscope from before scrubbing. It reads and writes as
/// the plain JSON array of arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedCommand(Vec<String>);

impl RecordedCommand {
    /// This process's own command line, scrubbed.
    pub fn of_this_process() -> RecordedCommand {
        RecordedCommand::new(std::env::args())
    }

    /// A command line, scrubbed.
    pub fn new<I, S>(args: I) -> RecordedCommand
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        RecordedCommand(scrub_args(args))
    }

    /// The arguments joined by spaces, for people.
    pub fn display(&self) -> String {
        self.0.join(" ")
    }
}

impl std::ops::Deref for RecordedCommand {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.0
    }
}

impl Serialize for RecordedCommand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RecordedCommand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(d).map(RecordedCommand::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrubbed(args: &[&str]) -> Vec<String> {
        scrub_args(args)
    }

    #[test]
    fn url_passwords_are_masked_and_the_rest_kept() {
        // The URI forms of the PostgreSQL manual (libpq, "Connection URIs").
        assert_eq!(
            scrub_text("postgresql://user:secret@localhost"),
            "postgresql://user:***@localhost"
        );
        assert_eq!(
            scrub_text("postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp"),
            "postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp"
        );
        assert_eq!(
            scrub_text("postgresql://host1:123,host2:456/somedb?target_session_attrs=any"),
            "postgresql://host1:123,host2:456/somedb?target_session_attrs=any"
        );
        assert_eq!(
            scrub_text("postgres://u:p@[2001:db8::1234]/d"),
            "postgres://u:***@[2001:db8::1234]/d"
        );
        // A password holding unencoded `@`, `/` and `:` is masked whole.
        assert_eq!(
            scrub_text("postgresql://bench:p@ss/w:rd@127.0.0.1:5432/postgres"),
            "postgresql://bench:***@127.0.0.1:5432/postgres"
        );
        // A space in a password (libpq reads it as part of the password).
        assert_eq!(scrub_text("postgresql://u:two words@h/d"), "postgresql://u:***@h/d");
        // An `@` in the query masks more, never less.
        assert_eq!(
            scrub_text("postgresql://u:pw@h/d?application_name=a@b"),
            "postgresql://u:***@b"
        );
        // Two URLs in one argument.
        assert_eq!(
            scrub_text("a=https://x:1@h b=postgres://y:2@k"),
            "a=https://x:***@h b=postgres://y:***@k"
        );
    }

    #[test]
    fn query_and_keyword_passwords_are_masked() {
        assert_eq!(
            scrub_text("postgresql://bench@h/db?password=hunter2&sslmode=disable"),
            "postgresql://bench@h/db?password=***&sslmode=disable"
        );
        // Outside a URL's query, `&` is part of the value.
        assert_eq!(scrub_text("password=a&b://x y"), "password=*** y");
        assert_eq!(
            scrub_text("host=localhost port=5432 password=hunter2 dbname=mydb"),
            "host=localhost port=5432 password=*** dbname=mydb"
        );
        assert_eq!(
            scrub_text("host=h password = 'two words \\' quoted' user=u"),
            "host=h password = *** user=u"
        );
        assert_eq!(scrub_text("PGPASSWORD=hunter2"), "PGPASSWORD=***");
        // Text glued to a closing quote goes with the value (found by fuzzing: a second
        // pass read it as a value of its own).
        assert_eq!(scrub_text("password='=h password='a \\' b'"), "password=*** \\' b'");
        assert_eq!(
            scrub_text("GITHUB_TOKEN=abc API_SECRET=def X=1"),
            "GITHUB_TOKEN=*** API_SECRET=*** X=1"
        );
        // Names that only contain a secret word's letters elsewhere stay.
        assert_eq!(scrub_text("passfile=/home/u/.pgpass"), "passfile=/home/u/.pgpass");
        assert_eq!(scrub_text("keys=3"), "keys=3");
    }

    #[test]
    fn secret_flags_lose_their_values() {
        assert_eq!(
            scrubbed(&["cryptoscope", "run", "--db-password", "hunter2", "--quick"]),
            ["cryptoscope", "run", "--db-password", "***", "--quick"]
        );
        assert_eq!(
            scrubbed(&["x", "--api-token=abc", "--key-file", "/k.pem", "--client_secret", "s"]),
            ["x", "--api-token=***", "--key-file", "***", "--client_secret", "***"]
        );
        assert_eq!(
            scrubbed(&[
                "cryptoscope",
                "run",
                "--db",
                "postgresql://bench:hunter2@127.0.0.1:5432/postgres"
            ]),
            [
                "cryptoscope",
                "run",
                "--db",
                "postgresql://bench:***@127.0.0.1:5432/postgres"
            ]
        );
        // A secret flag last on the line has nothing to mask.
        assert_eq!(scrubbed(&["x", "--password"]), ["x", "--password"]);
        // Ordinary flags and values stay as they were.
        let plain = [
            "cryptoscope",
            "run",
            "--alg",
            "ML-KEM-768",
            "--db",
            "results.db",
            "--json",
            "out.json",
        ];
        assert_eq!(scrubbed(&plain), plain);
    }

    #[test]
    fn scrubbing_is_idempotent() {
        let once = scrubbed(&[
            "x",
            "--db",
            "postgresql://a:b@c/d?password=e",
            "--token",
            "t",
            "password='q r'",
        ]);
        assert_eq!(scrub_args(&once), once);
        assert_eq!(
            once,
            [
                "x",
                "--db",
                "postgresql://a:***@c/d?password=***",
                "--token",
                "***",
                "password=***"
            ]
        );
    }

    #[test]
    fn a_recorded_command_read_back_is_scrubbed() {
        let old = r#"["cryptoscope","run","--db","postgresql://bench:hunter2@h/db"]"#;
        let c: RecordedCommand = serde_json::from_str(old).unwrap();
        assert_eq!(c.display(), "cryptoscope run --db postgresql://bench:***@h/db");
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"["cryptoscope","run","--db","postgresql://bench:***@h/db"]"#
        );
    }
}
