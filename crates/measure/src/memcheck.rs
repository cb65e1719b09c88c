//! Reading valgrind memcheck's XML output (`--xml=yes`, protocol 4): the errors with their
//! kind, message and stack, and how many times each occurred. `cryptoscope ct` turns the
//! "uninitialised value" errors into constant-time findings, since it marks secrets as
//! uninitialised; with `--track-origins=yes` each error also says where its undefined
//! value was created, which separates the marked secrets from memory never written.

use serde::{Deserialize, Serialize};

/// One stack frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Function name as valgrind demangled it ("???" when unknown).
    pub function: String,
    /// `file:line` when debug information had it.
    pub location: Option<String>,
    /// The object (executable or library) the code is in.
    pub object: Option<String>,
}

/// One distinct error (valgrind reports each distinct stack once, and counts repeats).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemcheckError {
    /// Valgrind's kind: `UninitCondition`, `UninitValue`, `InvalidRead`, ...
    pub kind: String,
    /// Valgrind's message.
    pub what: String,
    pub stack: Vec<Frame>,
    /// Occurrences (from `<errorcounts>`; 1 when absent).
    pub count: u64,
    /// Where the undefined value came from (`--track-origins=yes`): valgrind's words and
    /// the stack that created it.
    #[serde(default)]
    pub origin: Option<Origin>,
}

/// The origin of an uninitialised value, as `--track-origins=yes` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// "Uninitialised value was created by a client request", "... by a stack
    /// allocation", "... by a heap allocation".
    pub what: String,
    /// The stack where it was created (innermost first; may be empty).
    pub stack: Vec<Frame>,
}

impl Origin {
    /// Made undefined by the program itself (`VALGRIND_MAKE_MEM_UNDEFINED`): the secrets
    /// `cryptoscope ct` marks.
    pub fn is_client_request(&self) -> bool {
        self.what.contains("client request")
    }
}

/// Why an XML file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlError(pub String);

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "memcheck XML: {}", self.0)
    }
}

impl std::error::Error for XmlError {}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The text of the first `<tag>…</tag>` in `s`, unescaped.
fn field(s: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let a = s.find(&open)? + open.len();
    let b = a + s[a..].find(&close)?;
    Some(unescape(s[a..b].trim()))
}

/// Every `<tag>…</tag>` block in `s` (not nested in itself), without the tags.
fn blocks<'a>(s: &'a str, tag: &str) -> Result<Vec<&'a str>, XmlError> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let j = body
            .find(&close)
            .ok_or_else(|| XmlError(format!("<{tag}> without </{tag}> (truncated file?)")))?;
        out.push(&body[..j]);
        rest = &body[j + close.len()..];
    }
    Ok(out)
}

/// The frames of one `<stack>` block.
fn frames(stack: &str) -> Result<Vec<Frame>, XmlError> {
    let mut out = Vec::new();
    for f in blocks(stack, "frame")? {
        let location = match (field(f, "file"), field(f, "line")) {
            (Some(file), Some(line)) => Some(format!("{file}:{line}")),
            (Some(file), None) => Some(file),
            _ => None,
        };
        out.push(Frame {
            function: field(f, "fn").unwrap_or_else(|| "???".into()),
            location,
            object: field(f, "obj"),
        });
    }
    Ok(out)
}

/// Parses memcheck's XML. A file without the `<valgrindoutput>` root is an error; a run
/// that ended early (no closing root) still yields the errors written before.
pub fn parse(text: &str) -> Result<Vec<MemcheckError>, XmlError> {
    if !text.contains("<valgrindoutput>") {
        return Err(XmlError("not valgrind XML output (no <valgrindoutput>)".into()));
    }
    let mut counts = std::collections::HashMap::new();
    for c in blocks(text, "errorcounts")? {
        for p in blocks(c, "pair")? {
            if let (Some(n), Some(u)) = (field(p, "count"), field(p, "unique")) {
                // An error valgrind lists occurred at least once.
                let n: u64 = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| XmlError(format!("bad error count `{n}`")))?;
                counts.insert(u, n);
            }
        }
    }
    let mut out = Vec::new();
    // Errors are top-level <error> blocks; <errorcounts> holds none.
    for e in blocks(text, "error")? {
        let kind = field(e, "kind").ok_or_else(|| XmlError("an <error> without <kind>".into()))?;
        let what = field(e, "what")
            .or_else(|| blocks(e, "xwhat").ok()?.first().and_then(|x| field(x, "text")))
            .unwrap_or_default();
        let stacks = blocks(e, "stack")?;
        let stack = frames(stacks.first().copied().unwrap_or(""))?;
        // With --track-origins=yes, an <auxwhat> says where the value was created and the
        // second <stack> is that place.
        let origin = match blocks(e, "auxwhat")?.into_iter().find(|a| a.contains("was created by")) {
            Some(a) => Some(Origin {
                what: unescape(a.trim()),
                stack: frames(stacks.get(1).copied().unwrap_or(""))?,
            }),
            None => None,
        };
        let count = field(e, "unique").and_then(|u| counts.get(&u).copied()).unwrap_or(1);
        out.push(MemcheckError {
            kind,
            what,
            stack,
            count,
            origin,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The shape of valgrind 3.19's XML (protocol 4), abridged by hand.
    const SAMPLE: &str = r#"<?xml version="1.0"?>
<valgrindoutput>
<protocolversion>4</protocolversion>
<error>
  <unique>0x0</unique>
  <tid>1</tid>
  <kind>UninitCondition</kind>
  <what>Conditional jump or move depends on uninitialised value(s)</what>
  <stack>
    <frame>
      <ip>0x10A2B3</ip>
      <obj>/bin/w</obj>
      <fn>early_exit_equal</fn>
      <dir>/src</dir>
      <file>lib.rs</file>
      <line>88</line>
    </frame>
    <frame>
      <ip>0x10A400</ip>
      <obj>/bin/w</obj>
      <fn>cryptoscope_worker::ct::cryptoscope_ct_op_hash&lt;T&gt;</fn>
    </frame>
  </stack>
</error>
<error>
  <unique>0x1</unique>
  <tid>1</tid>
  <kind>UninitValue</kind>
  <what>Use of uninitialised value of size 8</what>
  <stack>
    <frame>
      <ip>0x1</ip>
      <fn>table_round</fn>
    </frame>
  </stack>
  <auxwhat>Uninitialised value was created by a stack allocation</auxwhat>
  <stack>
    <frame>
      <ip>0x2</ip>
      <obj>/bin/w</obj>
      <fn>genpoly_gen</fn>
      <dir>/src</dir>
      <file>sk_gen.c</file>
      <line>55</line>
    </frame>
  </stack>
</error>
<errorcounts>
  <pair>
    <count>16</count>
    <unique>0x0</unique>
  </pair>
</errorcounts>
</valgrindoutput>
"#;

    #[test]
    fn errors_frames_and_counts() {
        let e = parse(SAMPLE).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].kind, "UninitCondition");
        assert_eq!(e[0].count, 16);
        assert_eq!(e[0].stack[0].function, "early_exit_equal");
        assert_eq!(e[0].stack[0].location.as_deref(), Some("lib.rs:88"));
        assert_eq!(
            e[0].stack[1].function,
            "cryptoscope_worker::ct::cryptoscope_ct_op_hash<T>"
        );
        assert_eq!(e[1].what, "Use of uninitialised value of size 8");
        assert_eq!(e[1].count, 1);
        assert_eq!(e[1].stack[0].location, None);
        assert_eq!(e[0].origin, None);
        let o = e[1].origin.as_ref().unwrap();
        assert!(!o.is_client_request());
        assert_eq!(o.what, "Uninitialised value was created by a stack allocation");
        assert_eq!(o.stack[0].function, "genpoly_gen");
        assert_eq!(o.stack[0].location.as_deref(), Some("sk_gen.c:55"));
        // The stack of the error stays the first one.
        assert_eq!(e[1].stack.len(), 1);
    }

    #[test]
    fn origins_in_real_valgrind_output() {
        // valgrind 3.19 with --track-origins=yes on PQClean's Classic McEliece key
        // generation (kept as fuzzing seeds, abridged to two errors and six frames each).
        let stack = parse(include_str!(
            "../../../fuzz/seeds/memcheck_xml/origins_stack_allocation.xml"
        ))
        .unwrap();
        assert_eq!(stack.len(), 2);
        // An error without an origin line: valgrind could not tell.
        assert_eq!(stack[0].origin, None);
        let o = stack[1].origin.as_ref().unwrap();
        assert!(!o.is_client_request(), "{o:?}");
        assert_eq!(o.stack[0].function, "PQCLEAN_MCELIECE348864_AVX2_genpoly_gen");
        assert_eq!(o.stack[0].location.as_deref(), Some("sk_gen.c:55"));
        assert_eq!(stack[1].stack[0].function, "PQCLEAN_MCELIECE348864_AVX2_pk_gen");
        let client = parse(include_str!(
            "../../../fuzz/seeds/memcheck_xml/origins_client_request.xml"
        ))
        .unwrap();
        assert!(!client.is_empty());
        for e in &client {
            let o = e.origin.as_ref().unwrap();
            assert!(o.is_client_request(), "{o:?}");
            assert_eq!(o.stack[0].function, "cryptoscope_ct_secret");
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(parse("hello").is_err());
        assert!(parse("<valgrindoutput><error><kind>X</kind>").is_err());
        assert!(parse("<valgrindoutput><error><what>no kind</what></error>").is_err());
        assert!(
            parse("<valgrindoutput><errorcounts><pair><count>x</count><unique>1</unique></pair></errorcounts>")
                .is_err()
        );
        assert_eq!(parse("<valgrindoutput>").unwrap(), vec![]);
        // Found by fuzzing (`memcheck_xml`): `00` was read as an error that never occurred.
        for zero in ["0", "00"] {
            let t = format!(
                "<valgrindoutput><errorcounts><pair><count>{zero}</count><unique>0x1</unique></pair></errorcounts>"
            );
            assert!(parse(&t).is_err(), "{zero}");
        }
    }
}
