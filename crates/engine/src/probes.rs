//! Timing probes for the monitored internal functions of our own builds (the PQC-KEM
//! profiling thesis's `poly_Rq_mul`, `pk_gen`, `synd`, ...). The build links a second
//! library in which every call of such a function from another source file goes through a
//! generated wrapper (`ld --wrap`): the wrapper reads the time-stamp counter before and
//! after the real function and adds the difference and one call to counters the worker
//! reads around each operation. So the cycles per call are measured inside real operations
//! on real inputs, not on inputs made up for a stand-alone harness.
//!
//! What it cannot see, and says so: functions that are `static` (file-local, often
//! inlined) and calls from inside the function's own source file, which never reach the
//! linker. `cryptoscope micro` puts the wrapper's call count beside callgrind's, so a
//! difference is visible.

use cryptoscope_catalogue::names::MONITORED_FUNCTIONS;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A monitored function declared in one of the sources' headers.
#[derive(Debug, Clone, PartialEq)]
pub struct Prototype {
    /// Short name, as in [`MONITORED_FUNCTIONS`].
    pub name: String,
    /// The header that declares it.
    pub header: PathBuf,
    /// Return type as written (`void`, `int`).
    pub ret: String,
    /// The declared identifier (a namespaced name or a macro that becomes one).
    pub ident: String,
    /// The parameter list as written, and the parameter names in order.
    pub params: String,
    pub args: Vec<String>,
}

/// C text without comments and preprocessor lines (continuations included).
fn declarations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            out.push(' ');
        } else if b[i..].starts_with(b"//") {
            i = text[i..].find('\n').map_or(b.len(), |e| i + e);
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    let mut kept = String::with_capacity(out.len());
    let mut in_directive = false;
    for line in out.lines() {
        let t = line.trim_start();
        if in_directive || t.starts_with('#') {
            in_directive = t.ends_with('\\');
            kept.push('\n');
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

const C_TYPE_WORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "const", "volatile", "restrict",
    "struct", "union", "enum",
];

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The parameter names of a parameter list, or why the list cannot be forwarded.
fn parameter_names(params: &str) -> Result<Vec<String>, String> {
    let p = params.trim();
    if p.is_empty() || p == "void" {
        return Ok(Vec::new());
    }
    if p.contains('(') || p.contains("...") {
        return Err("function-pointer or variadic parameters".into());
    }
    let mut names = Vec::new();
    for one in p.split(',') {
        let base = one.split('[').next().unwrap_or("").trim();
        let name: String = base
            .chars()
            .rev()
            .take_while(|&c| is_ident_char(c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let before = base[..base.len() - name.len()].trim();
        if name.is_empty() || before.is_empty() || C_TYPE_WORDS.contains(&name.as_str()) {
            return Err(format!("unnamed parameter `{}`", one.trim()));
        }
        names.push(name);
    }
    Ok(names)
}

/// Monitored functions declared in `source`'s headers, and notes on those that are only
/// defined `static` in a `.c` file (which no wrapper can reach).
pub fn prototypes(source: &Path) -> (Vec<Prototype>, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(source)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    let mut found: Vec<Prototype> = Vec::new();
    let mut notes = Vec::new();
    let mut statics: Vec<(String, String)> = Vec::new();
    for f in &files {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext != "h" && ext != "c" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        let decls = declarations(&text);
        for stmt in decls.split([';', '{', '}']) {
            let stmt = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
            let Some(open) = stmt.find('(') else { continue };
            let head = stmt[..open].trim_end();
            let ident: String = head
                .chars()
                .rev()
                .take_while(|&c| is_ident_char(c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let Some(name) = MONITORED_FUNCTIONS
                .iter()
                .find(|m| ident == **m || ident.ends_with(&format!("_{m}")))
            else {
                continue;
            };
            let ret = head[..head.len() - ident.len()].trim();
            if ret.is_empty() || ret.contains('=') || ret.contains("return") || ret.contains("typedef") {
                continue;
            }
            if ret.split_whitespace().any(|w| w == "static") {
                if ext == "c" {
                    let file = f
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    statics.push((name.to_string(), file));
                }
                continue;
            }
            if ext != "h" || !stmt.ends_with(')') || found.iter().any(|p| p.name == *name) {
                continue;
            }
            let params = stmt[open + 1..stmt.len() - 1].to_string();
            match parameter_names(&params) {
                Ok(args) => found.push(Prototype {
                    name: name.to_string(),
                    header: f.clone(),
                    ret: ret.replace("extern ", "").trim().to_string(),
                    ident,
                    params,
                    args,
                }),
                Err(e) => notes.push(format!("{name}: not probed: {e}")),
            }
        }
    }
    for (name, file) in statics {
        if !found.iter().any(|p| p.name == name) && !notes.iter().any(|n| n.starts_with(&format!("{name}:"))) {
            notes.push(format!(
                "{name}: file-local (static) in {file}, so no wrapper can reach it; `profile` still counts its instructions"
            ));
        }
    }
    found.sort_by_key(|p| MONITORED_FUNCTIONS.iter().position(|m| *m == p.name));
    (found, notes)
}

/// The linker symbol a declared identifier becomes (PQClean declares `pk_gen` and
/// defines it to a namespaced name), found by running the compiler's preprocessor.
pub fn symbol(cc: &str, flags: &[String], f: &Prototype, scratch: &Path) -> Result<String, String> {
    let probe = scratch.join("cs_symbol.c");
    let marker = "CS_SYMBOL_IS";
    std::fs::write(
        &probe,
        format!("#include \"{}\"\n{marker} {}\n", f.header.display(), f.ident),
    )
    .map_err(|e| e.to_string())?;
    let out = Command::new(cc)
        .args(flags)
        .args(["-E", "-P"])
        .arg(&probe)
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if !out.status.success() {
        return Err(format!("preprocessing {} failed", f.header.display()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(marker))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.chars().all(is_ident_char))
        .ok_or_else(|| format!("`{}` does not name a symbol", f.ident))
}

/// The C source of the wrappers and of the counters' exported readers.
pub fn source(functions: &[(Prototype, String)]) -> String {
    let n = functions.len();
    let mut c = String::from(
        "/* cryptoscope timing probes: generated, do not edit. */\n#include <stddef.h>\n#include <stdint.h>\n#include <stdlib.h>\n",
    );
    let mut headers: Vec<&PathBuf> = functions.iter().map(|(f, _)| &f.header).collect();
    headers.dedup();
    for h in headers {
        c.push_str(&format!("#include \"{}\"\n", h.display()));
    }
    c.push_str(
        r#"
#define CS_EXPORT __attribute__((visibility("default")))
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t cs_tick(void) {
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}
CS_EXPORT int cs_probe_tsc(void) { return 1; }
#else
#include <time.h>
static inline uint64_t cs_tick(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
CS_EXPORT int cs_probe_tsc(void) { return 0; }
#endif
"#,
    );
    let names: Vec<String> = functions.iter().map(|(f, _)| format!("\"{}\"", f.name)).collect();
    c.push_str(&format!(
        "#define CS_PROBES {n}\nstatic const char *const cs_probe_names[CS_PROBES] = {{{}}};\n\
static uint64_t cs_probe_calls[CS_PROBES], cs_probe_ticks[CS_PROBES];\n",
        names.join(", ")
    ));
    c.push_str(
        r#"
CS_EXPORT int cs_probe_count(void) { return CS_PROBES; }
CS_EXPORT const char *cs_probe_name(int i) { return i >= 0 && i < CS_PROBES ? cs_probe_names[i] : ""; }
CS_EXPORT void cs_probe_read(uint64_t *calls, uint64_t *ticks) {
    for (int i = 0; i < CS_PROBES; i++) {
        calls[i] = __atomic_load_n(&cs_probe_calls[i], __ATOMIC_RELAXED);
        ticks[i] = __atomic_load_n(&cs_probe_ticks[i], __ATOMIC_RELAXED);
    }
}

static int cs_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of 2001 probes around nothing: subtracted from every probed call. */
CS_EXPORT uint64_t cs_probe_overhead(void) {
    enum { N = 2001 };
    static uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = cs_tick();
        uint64_t t1 = cs_tick();
        d[i] = t1 - t0;
    }
    qsort(d, N, sizeof d[0], cs_cmp);
    return d[N / 2];
}
"#,
    );
    for (i, (f, sym)) in functions.iter().enumerate() {
        let params = if f.params.trim().is_empty() {
            "void"
        } else {
            f.params.as_str()
        };
        let args = f.args.join(", ");
        let void = f.ret == "void";
        c.push_str(&format!(
            "\n{} __real_{sym}({params});\n{} __wrap_{sym}({params}) {{\n",
            f.ret, f.ret
        ));
        c.push_str("    uint64_t cs_t0 = cs_tick();\n");
        if void {
            c.push_str(&format!("    __real_{sym}({args});\n"));
        } else {
            c.push_str(&format!("    {} cs_r = __real_{sym}({args});\n", f.ret));
        }
        c.push_str(&format!(
            "    uint64_t cs_t1 = cs_tick();\n    __atomic_fetch_add(&cs_probe_ticks[{i}], cs_t1 - cs_t0, __ATOMIC_RELAXED);\n    __atomic_fetch_add(&cs_probe_calls[{i}], 1, __ATOMIC_RELAXED);\n"
        ));
        if !void {
            c.push_str("    return cs_r;\n");
        }
        c.push_str("}\n");
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_names_need_a_type_and_a_name() {
        assert_eq!(
            parameter_names("poly *r, const poly *a, const poly *b").unwrap(),
            ["r", "a", "b"]
        );
        assert_eq!(
            parameter_names("unsigned char s[SYND_BYTES], const unsigned char *pk").unwrap(),
            ["s", "pk"]
        );
        assert!(parameter_names("void").unwrap().is_empty());
        assert!(parameter_names("unsigned char *, int16_t *pi").is_err());
        assert!(parameter_names("const poly *").is_err());
        assert!(parameter_names("void (*f)(int)").is_err());
    }

    #[test]
    fn headers_give_prototypes_and_statics_give_notes() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("pk_gen.h"),
            "#ifndef X\n#define X\n#define pk_gen CRYPTO_NAMESPACE(pk_gen)\n/* builds the key */\n\
             int pk_gen(unsigned char *pk, unsigned char *sk,\n           const uint32_t *perm, int16_t *pi);\n#endif\n",
        )
        .unwrap();
        std::fs::write(
            d.path().join("poly.h"),
            "void PQCLEAN_X_CLEAN_poly_Rq_mul(poly *r, const poly *a, const poly *b); // product\n\
             void PQCLEAN_X_CLEAN_poly_lift(poly *r, const poly *a);\n",
        )
        .unwrap();
        std::fs::write(
            d.path().join("encrypt.c"),
            "static void gen_e(unsigned char *e) {\n  int i;\n}\nvoid encrypt(void) { gen_e(0); }\n",
        )
        .unwrap();
        let (found, notes) = prototypes(d.path());
        let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["poly_Rq_mul", "pk_gen"]);
        assert_eq!(found[1].ret, "int");
        assert_eq!(found[1].args, ["pk", "sk", "perm", "pi"]);
        assert_eq!(found[0].ident, "PQCLEAN_X_CLEAN_poly_Rq_mul");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("gen_e: file-local (static) in encrypt.c"),
            "{notes:?}"
        );
    }
}
