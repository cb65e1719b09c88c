//! `cryptoscope build` and `cryptoscope add`: compiling C implementations with the
//! NIST/SUPERCOP KEM API through a matrix of compilers, flags and variants into isolated
//! shared libraries that the `build` provider measures (see `cryptoscope_worker::builds`).

use crate::context::Env;
use crate::probes;
use anyhow::{bail, Result};
use cryptoscope_worker::builds::{self, Manifest};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shim compiled into every build: the harness's randomness behind `randombytes`
/// (PQClean's `PQCLEAN_randombytes` and the NIST API's `randombytes`), and the only
/// visible entry points, `cs_set_rng`, `cs_keypair`, `cs_enc` and `cs_dec`.
const SHIM: &str = r#"/* cryptoscope build shim: generated, do not edit. */
#include <stddef.h>
#include <stdint.h>

#define CS_EXPORT __attribute__((visibility("default")))

typedef void (*cs_rng_fn)(uint8_t *, size_t);
static cs_rng_fn cs_rng;

CS_EXPORT void cs_set_rng(cs_rng_fn f) { cs_rng = f; }

static int cs_fill(uint8_t *out, size_t n) {
    if (cs_rng == NULL) return -1;
    cs_rng(out, n);
    return 0;
}

int PQCLEAN_randombytes(uint8_t *out, size_t n) { return cs_fill(out, n); }
int randombytes(unsigned char *out, unsigned long long n) { return cs_fill(out, (size_t)n); }

int CS_KEYPAIR(unsigned char *pk, unsigned char *sk);
int CS_ENC(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int CS_DEC(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);

CS_EXPORT int cs_keypair(unsigned char *pk, unsigned char *sk) { return CS_KEYPAIR(pk, sk); }
CS_EXPORT int cs_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) { return CS_ENC(ct, ss, pk); }
CS_EXPORT int cs_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) { return CS_DEC(ss, ct, sk); }
"#;

/// The shim of a liboqs build: liboqs's public KEM functions behind the same `cs_*` entry
/// points, the harness's randomness installed as liboqs's custom randombytes.
const LIBOQS_SHIM: &str = r#"/* cryptoscope liboqs build shim: generated, do not edit. */
#include <stddef.h>
#include <stdint.h>
#include <oqs/oqs.h>

#define CS_EXPORT __attribute__((visibility("default")))
#define CS_CAT2(a, b) a##b
#define CS_CAT(a, b) CS_CAT2(a, b)
#define CS_FN(op) CS_CAT(CS_CAT(OQS_KEM_, CS_METHOD), op)

CS_EXPORT void cs_set_rng(void (*f)(uint8_t *, size_t)) {
    OQS_init();
    OQS_randombytes_custom_algorithm(f);
}
CS_EXPORT int cs_keypair(unsigned char *pk, unsigned char *sk) { return CS_FN(_keypair)(pk, sk) == OQS_SUCCESS ? 0 : -1; }
CS_EXPORT int cs_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) { return CS_FN(_encaps)(ct, ss, pk) == OQS_SUCCESS ? 0 : -1; }
CS_EXPORT int cs_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) { return CS_FN(_decaps)(ss, ct, sk) == OQS_SUCCESS ? 0 : -1; }
"#;

/// The header users' code may include for `randombytes` (the NIST API's signature).
const RANDOMBYTES_H: &str = "#ifndef CRYPTOSCOPE_RANDOMBYTES_H\n#define CRYPTOSCOPE_RANDOMBYTES_H\n\
/* Supplied by cryptoscope: draws from the harness (the NIST KAT DRBG in the gate). */\n\
int randombytes(unsigned char *x, unsigned long long xlen);\n#endif\n";

/// Files of a NIST submission package that are not part of the implementation.
const EXCLUDED: &[&str] = &["PQCgenKAT_kem.c", "rng.c", "randombytes.c"];

/// Flags the AVX2 variants of PQClean need (as the pqcrypto crates pass them).
const AVX2_FLAGS: &[&str] = &["-mavx2", "-mbmi2", "-mbmi", "-maes", "-mpopcnt", "-mpclmul"];

/// What `api.h` declares.
#[derive(Debug, Clone, PartialEq)]
pub struct Api {
    /// Namespace of the names (`PQCLEAN_NTRUHRSS701_CLEAN_`), empty for the plain NIST API.
    pub prefix: String,
    pub public_key: usize,
    pub secret_key: usize,
    pub ciphertext: usize,
    pub shared_secret: usize,
    pub algname: String,
}

/// Reads the `CRYPTO_*` constants of an `api.h`; errors name what is missing or wrong.
pub fn parse_api(text: &str) -> std::result::Result<Api, String> {
    let mut prefix: Option<String> = None;
    let mut get = |what: &str| -> std::result::Result<String, String> {
        for line in text.lines() {
            let mut t = line.split_whitespace();
            if t.next() != Some("#define") {
                continue;
            }
            let (Some(name), Some(value)) = (t.next(), t.next()) else {
                continue;
            };
            let Some(p) = name.strip_suffix(what) else { continue };
            if !p.is_empty() && !p.ends_with('_') {
                continue;
            }
            match &prefix {
                Some(q) if q != p => return Err(format!("api.h mixes prefixes `{q}` and `{p}`")),
                _ => prefix = Some(p.to_string()),
            }
            return Ok(value.to_string());
        }
        Err(format!("api.h does not define {what}"))
    };
    let num = |what: &str, v: String| -> std::result::Result<usize, String> {
        v.trim_matches(|c| c == '(' || c == ')')
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0 && n <= 1 << 26)
            .ok_or_else(|| format!("api.h: {what} is `{v}`, not a byte count"))
    };
    let public_key = num("CRYPTO_PUBLICKEYBYTES", get("CRYPTO_PUBLICKEYBYTES")?)?;
    let secret_key = num("CRYPTO_SECRETKEYBYTES", get("CRYPTO_SECRETKEYBYTES")?)?;
    let ciphertext = num("CRYPTO_CIPHERTEXTBYTES", get("CRYPTO_CIPHERTEXTBYTES")?)?;
    let shared_secret = num("CRYPTO_BYTES", get("CRYPTO_BYTES")?)?;
    let algname = get("CRYPTO_ALGNAME")?.trim_matches('"').to_string();
    Ok(Api {
        prefix: prefix.unwrap_or_default(),
        public_key,
        secret_key,
        ciphertext,
        shared_secret,
        algname,
    })
}

/// First `--version` line of a compiler, or an error if it cannot run.
pub fn compiler_version(cc: &str) -> std::result::Result<String, String> {
    let out = Command::new(cc)
        .arg("--version")
        .output()
        .map_err(|e| format!("compiler `{cc}` cannot run ({e}); scripts/setup.sh installs gcc and clang"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string())
}

/// Major version from a `--version` line: "gcc (Debian 12.2.0-14) 12.2.0" -> 12,
/// "Debian clang version 14.0.6" -> 14.
pub fn major(version_line: &str) -> String {
    let tok = match version_line.split_whitespace().position(|t| t == "version") {
        Some(i) => version_line.split_whitespace().nth(i + 1),
        None => version_line.split_whitespace().last(),
    };
    tok.and_then(|t| t.split('.').next())
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or("")
        .to_string()
}

/// Implementation label: `<variant>-<cc><major>-<flags>`, e.g. `clean-gcc12-O3_march=native`.
pub fn label(variant: &str, cc: &str, version_line: &str, flags: &[String]) -> String {
    let name = Path::new(cc)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| cc.to_string());
    let slug: Vec<String> = flags
        .iter()
        .flat_map(|f| f.split_whitespace())
        .map(|f| f.trim_start_matches('-').replace('/', "_"))
        .collect();
    let slug = if slug.is_empty() {
        "default".to_string()
    } else {
        slug.join("_")
    };
    format!("{variant}-{name}{}-{slug}", major(version_line))
}

/// PQClean's directory name for a catalogue algorithm and the crate that ships it.
fn pqclean_name(alg: &str) -> (String, &'static str) {
    let lower = alg.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("classic-mceliece-") {
        (format!("mceliece{rest}"), "pqcrypto-classicmceliece")
    } else if lower.starts_with("ntru-") {
        (lower.replace('-', ""), "pqcrypto-ntru")
    } else if lower.starts_with("hqc-") {
        (lower, "pqcrypto-hqc")
    } else {
        (lower, "pqcrypto-mlkem")
    }
}

/// liboqs's method name for a catalogue algorithm (`ML-KEM-512` → `ml_kem_512`).
fn liboqs_method(alg: &str) -> String {
    if alg == "sntrup761" {
        return "ntruprime_sntrup761".into();
    }
    alg.to_ascii_lowercase().replace('-', "_")
}

/// liboqs's sources as the `oqs-sys` crate vendors them (the library the `liboqs`
/// provider links), if they implement `alg`.
pub fn liboqs_job(env: &Env, alg: &str, variant: &str, cc: &str, flags: &[String]) -> Option<Job> {
    let (root, version) = crate_dir(env, "oqs-sys")?;
    let source = root.join("liboqs");
    let method = liboqs_method(alg);
    let algs = std::fs::read_to_string(source.join(".CMake/alg_support.cmake")).ok()?;
    algs.contains(&format!("OQS_ENABLE_KEM_{method} ")).then(|| Job {
        algorithm: alg.to_string(),
        origin: "liboqs".into(),
        source,
        common: None,
        variant: variant.to_string(),
        source_version: format!("liboqs as vendored in oqs-sys {version}"),
        cc: cc.to_string(),
        flags: flags.to_vec(),
    })
}

/// Compiles one algorithm of liboqs with its own CMake (a minimal build: only that KEM and
/// liboqs's common code) into a static library, and links it with the shim into an
/// isolated shared library: every liboqs symbol hidden (`--exclude-libs`).
/// `clean` is `OQS_OPT_TARGET=generic` (portable code only); `avx2` is `auto` (liboqs adds
/// -march=native and enables its AVX2 code). CMake's build type is Debug with our own
/// flags, because every other build type makes liboqs add -O3 after them.
fn compile_liboqs(job: &Job) -> std::result::Result<(PathBuf, Manifest), String> {
    let method = liboqs_method(&job.algorithm);
    let cc_version = compiler_version(&job.cc)?;
    let label = label(&format!("liboqs_{}", job.variant), &job.cc, &cc_version, &job.flags);
    let root = builds::dir();
    let out_dir = root.join(format!("{}__{label}", job.algorithm));
    let tmp = root.join(format!(".tmp-{}-{label}-{}", job.algorithm, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let fail = |e: String| {
        let _ = std::fs::remove_dir_all(&tmp);
        e
    };
    let cmake_dir = tmp.join("cmake");
    let flags = job.flags.join(" ");
    let run = |cmd: &mut Command, what: &str| -> std::result::Result<(), String> {
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {what}: {e} (scripts/setup.sh installs cmake)"))?;
        if out.status.success() {
            return Ok(());
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let first = text
            .lines()
            .find(|l| l.contains("error") || l.contains("Error"))
            .unwrap_or_else(|| text.lines().last().unwrap_or("no message"));
        Err(format!("{what} failed for liboqs {method}: {}", first.trim()))
    };
    let avx2 = job.variant == "avx2";
    run(
        Command::new("cmake")
            .arg("-S")
            .arg(&job.source)
            .arg("-B")
            .arg(&cmake_dir)
            .arg(format!("-DCMAKE_C_COMPILER={}", job.cc))
            .arg(format!("-DCMAKE_C_FLAGS={flags}"))
            .arg("-DCMAKE_BUILD_TYPE=Debug")
            .arg("-DCMAKE_C_FLAGS_DEBUG=-gdwarf-4")
            .arg(format!("-DOQS_MINIMAL_BUILD=KEM_{method}"))
            .arg("-DOQS_BUILD_ONLY_LIB=ON")
            .arg("-DOQS_USE_OPENSSL=OFF")
            .arg("-DOQS_DIST_BUILD=OFF")
            .arg(format!("-DOQS_OPT_TARGET={}", if avx2 { "auto" } else { "generic" }))
            .arg("-DCMAKE_POSITION_INDEPENDENT_CODE=ON")
            .arg("-DBUILD_SHARED_LIBS=OFF"),
        "cmake",
    )
    .map_err(fail)?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get()).to_string();
    run(
        Command::new("cmake")
            .arg("--build")
            .arg(&cmake_dir)
            .args(["--parallel", &jobs]),
        "cmake --build",
    )
    .map_err(fail)?;
    let include = cmake_dir.join("include");
    let sizes = liboqs_sizes(&include, &method).map_err(fail)?;
    let shim = tmp.join("cs_liboqs_shim.c");
    std::fs::write(&shim, LIBOQS_SHIM).map_err(|e| fail(e.to_string()))?;
    let mut cmd = Command::new(&job.cc);
    cmd.args(job.flags.iter().flat_map(|f| f.split_whitespace()))
        .args([
            "-gdwarf-4",
            "-fPIC",
            "-shared",
            "-fvisibility=hidden",
            "-pthread",
            "-Wl,-z,defs",
        ])
        .arg("-Wl,--exclude-libs,ALL")
        .arg(format!("-DCS_METHOD={method}"))
        .arg(format!("-I{}", include.display()))
        .arg("-o")
        .arg(tmp.join(builds::LIBRARY))
        .arg(&shim)
        .arg(cmake_dir.join("lib/liboqs.a"));
    run_compiler(&mut cmd, &job.cc, &job.source).map_err(fail)?;
    let _ = std::fs::remove_dir_all(&cmake_dir);
    let _ = std::fs::remove_file(&shim);
    let m = Built {
        label,
        cc_version,
        algname: method.clone(),
        sizes,
        requires: Vec::new(),
        probes: Vec::new(),
        probe_notes: vec!["liboqs builds are linked from liboqs's static library and carry no probes".into()],
    }
    .manifest(job);
    install(&tmp, &out_dir, m).map_err(fail)
}

/// Public key, secret key, ciphertext and shared secret lengths from liboqs's headers.
fn liboqs_sizes(include: &Path, method: &str) -> std::result::Result<[usize; 4], String> {
    let mut text = String::new();
    let kem = include.join("oqs");
    for e in std::fs::read_dir(&kem)
        .map_err(|e| format!("cannot read {}: {e}", kem.display()))?
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with("kem_") {
            text.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    let mut out = [0usize; 4];
    for (k, what) in ["public_key", "secret_key", "ciphertext", "shared_secret"]
        .iter()
        .enumerate()
    {
        let name = format!("OQS_KEM_{method}_length_{what}");
        out[k] = text
            .lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some("#define") && w.next() == Some(name.as_str()))
                    .then(|| w.next().and_then(|v| v.parse().ok()))
                    .flatten()
            })
            .ok_or_else(|| format!("liboqs's headers do not define {name}"))?;
    }
    Ok(out)
}

/// Where cargo unpacked the pqcrypto crate that the `pqclean` provider links.
fn crate_dir(env: &Env, name: &str) -> Option<(PathBuf, String)> {
    let full = cryptoscope_worker::build_info::crate_version(name);
    let version = full.strip_prefix(&format!("{name} "))?.to_string();
    let home = env
        .path("CARGO_HOME")
        .or_else(|| env.path("HOME").map(|h| h.join(".cargo")))?;
    for e in std::fs::read_dir(home.join("registry/src")).ok()?.flatten() {
        let d = e.path().join(format!("{name}-{version}"));
        if d.is_dir() {
            return Some((d, version));
        }
    }
    None
}

/// One thing to compile.
#[derive(Debug, Clone)]
pub struct Job {
    pub algorithm: String,
    pub origin: String,
    pub source: PathBuf,
    /// Extra include directory with shared code (PQClean's `common`), if any.
    pub common: Option<PathBuf>,
    pub variant: String,
    pub source_version: String,
    pub cc: String,
    pub flags: Vec<String>,
}

/// The PQClean sources of `alg` in `variant` (clean, avx2), if the crates ship them.
pub fn pqclean_job(env: &Env, alg: &str, variant: &str, cc: &str, flags: &[String]) -> Option<Job> {
    let (dir, krate) = pqclean_name(alg);
    let (root, version) = crate_dir(env, krate)?;
    let source = root.join("pqclean/crypto_kem").join(&dir).join(variant);
    source.join("api.h").is_file().then(|| Job {
        algorithm: alg.to_string(),
        origin: "pqclean".into(),
        source,
        common: Some(root.join("pqclean/common")),
        variant: variant.to_string(),
        source_version: format!("PQClean as vendored in {krate} {version}"),
        cc: cc.to_string(),
        flags: flags.to_vec(),
    })
}

fn sources_in(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .filter(|p| p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)))
                .filter(|p| !EXCLUDED.iter().any(|x| p.file_name().is_some_and(|n| n == *x)))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Compiles a job into its own directory under the builds directory and writes its
/// manifest. Errors are one line (the compiler's first error).
pub fn compile(job: &Job) -> std::result::Result<(PathBuf, Manifest), String> {
    if job.origin == "liboqs" {
        return compile_liboqs(job);
    }
    let api_path = job.source.join("api.h");
    let api_text =
        std::fs::read_to_string(&api_path).map_err(|e| format!("cannot read {}: {e}", api_path.display()))?;
    let api = parse_api(&api_text).map_err(|e| format!("{}: {e}", api_path.display()))?;
    let cc_version = compiler_version(&job.cc)?;
    let label = label(&job.variant, &job.cc, &cc_version, &job.flags);
    let root = builds::dir();
    let out_dir = root.join(format!("{}__{label}", job.algorithm));
    let tmp = root.join(format!(".tmp-{}-{label}-{}", job.algorithm, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let shim_dir = tmp.join("shim");
    std::fs::create_dir_all(&shim_dir).map_err(|e| e.to_string())?;
    std::fs::write(shim_dir.join("cs_shim.c"), SHIM).map_err(|e| e.to_string())?;
    std::fs::write(shim_dir.join("randombytes.h"), RANDOMBYTES_H).map_err(|e| e.to_string())?;

    let avx2 = job.variant == "avx2";
    let (files, flags) = compile_inputs(job, &shim_dir)?;
    let p = &api.prefix;
    let defines = [
        format!("-DCS_KEYPAIR={p}crypto_kem_keypair"),
        format!("-DCS_ENC={p}crypto_kem_enc"),
        format!("-DCS_DEC={p}crypto_kem_dec"),
    ];
    let obj_dir = tmp.join("obj");
    std::fs::create_dir_all(&obj_dir).map_err(|e| e.to_string())?;
    // Each source to an object (in parallel), then two links of the same objects: the
    // library, and its probed twin.
    let compile_one = |(k, src): (usize, &PathBuf)| -> std::result::Result<PathBuf, String> {
        let stem = src
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let obj = obj_dir.join(format!("{k:03}-{stem}.o"));
        let mut cmd = Command::new(&job.cc);
        // DWARF 4: valgrind 3.19 (Debian 12) gives up on clang 14's DWARF 5 ("possibly
        // corrupted debuginfo"), which would take profile and --instructions down with it.
        cmd.args(&flags)
            .args(["-gdwarf-4", "-fPIC", "-fvisibility=hidden"])
            .args(&defines)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj);
        run_compiler(&mut cmd, &job.cc, &job.source)?;
        Ok(obj)
    };
    let mut sources = files.clone();
    sources.push(shim_dir.join("cs_shim.c"));
    let objects = match parallel_map(&sources, &compile_one) {
        Ok(o) => o,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    let link = |output: &Path, extra: &[PathBuf], extra_args: &[String]| -> std::result::Result<(), String> {
        let mut cmd = Command::new(&job.cc);
        cmd.args(&flags)
            .args(["-shared", "-Wl,-z,defs"])
            .args(extra_args)
            .arg("-o")
            .arg(output)
            .args(&objects)
            .args(extra);
        run_compiler(&mut cmd, &job.cc, &job.source)
    };
    if let Err(e) = link(&tmp.join(builds::LIBRARY), &[], &[]) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    // The probed twin: the same code with timing wrappers around the monitored functions.
    let (probed, probe_notes) = probed_twin(job, &flags, &shim_dir, &|c| compile_one((sources.len(), c)), &link);
    let _ = std::fs::remove_dir_all(&shim_dir);
    let _ = std::fs::remove_dir_all(&obj_dir);
    let m = Built {
        label,
        cc_version,
        algname: api.algname,
        sizes: [api.public_key, api.secret_key, api.ciphertext, api.shared_secret],
        requires: if avx2 {
            ["avx2", "bmi1", "bmi2", "aes", "popcnt", "pclmulqdq"]
                .map(String::from)
                .to_vec()
        } else {
            Vec::new()
        },
        probes: probed,
        probe_notes,
    }
    .manifest(job);
    install(&tmp, &out_dir, m)
}

/// What one C build compiles: the sources (the variant's, the common ones and, for AVX2,
/// the parallel Keccak) and the flags (the user's, AVX2's, the include directories).
fn compile_inputs(job: &Job, shim_dir: &Path) -> std::result::Result<(Vec<PathBuf>, Vec<String>), String> {
    let avx2 = job.variant == "avx2";
    let mut files = sources_in(&job.source, &["c", "s", "S"]);
    if files.is_empty() {
        return Err(format!("{} has no .c files", job.source.display()));
    }
    if let Some(common) = &job.common {
        files.extend(sources_in(common, &["c"]));
        if avx2 {
            for sub in ["keccak2x", "keccak4x"] {
                files.extend(sources_in(&common.join(sub), &["c"]));
            }
        }
    }
    let mut includes = vec![job.source.clone()];
    includes.extend(job.common.clone());
    includes.push(shim_dir.to_path_buf());
    let mut flags: Vec<String> = job
        .flags
        .iter()
        .flat_map(|f| f.split_whitespace().map(String::from))
        .collect();
    if avx2 {
        flags.extend(AVX2_FLAGS.iter().map(|f| f.to_string()));
    }
    flags.extend(includes.iter().map(|i| format!("-I{}", i.display())));
    Ok((files, flags))
}

/// Compiles one more source to an object.
type CompileOne<'a> = dyn Fn(&PathBuf) -> std::result::Result<PathBuf, String> + 'a;
/// Links the build's objects and these into a shared library, with these arguments.
type Link<'a> = dyn Fn(&Path, &[PathBuf], &[String]) -> std::result::Result<(), String> + 'a;

/// The probed twin of a build: the monitored functions its sources define, each wrapped
/// in a timing probe at link time. Returns the functions probed and notes on the others.
fn probed_twin(
    job: &Job,
    flags: &[String],
    shim_dir: &Path,
    compile_one: &CompileOne<'_>,
    link: &Link<'_>,
) -> (Vec<String>, Vec<String>) {
    let (found, mut probe_notes) = probes::prototypes(&job.source);
    let mut probed: Vec<String> = Vec::new();
    if found.is_empty() {
        return (probed, probe_notes);
    }
    let resolved: Vec<(probes::Prototype, String)> = found
        .into_iter()
        .filter_map(|f| match probes::symbol(&job.cc, flags, &f, shim_dir) {
            Ok(sym) => Some((f, sym)),
            Err(e) => {
                probe_notes.push(format!("{}: not probed: {e}", f.name));
                None
            }
        })
        .collect();
    let c = shim_dir.join("cs_probes.c");
    let wraps: Vec<String> = resolved.iter().map(|(_, sym)| format!("-Wl,--wrap={sym}")).collect();
    let tmp = shim_dir.parent().unwrap_or(shim_dir);
    let built = std::fs::write(&c, probes::source(&resolved))
        .map_err(|e| e.to_string())
        .and_then(|_| compile_one(&c))
        .and_then(|o| link(&tmp.join(builds::PROBES_LIBRARY), &[o], &wraps));
    match built {
        Ok(()) => probed = resolved.iter().map(|(f, _)| f.name.clone()).collect(),
        Err(e) => probe_notes.push(format!("probed library not built: {e}")),
    }
    (probed, probe_notes)
}

/// What a compilation found out, beside the job itself.
struct Built {
    label: String,
    cc_version: String,
    algname: String,
    /// Public key, secret key, ciphertext, shared secret.
    sizes: [usize; 4],
    requires: Vec<String>,
    probes: Vec<String>,
    probe_notes: Vec<String>,
}

impl Built {
    fn manifest(self, job: &Job) -> Manifest {
        Manifest {
            algorithm: job.algorithm.clone(),
            label: self.label,
            origin: job.origin.clone(),
            source: job.source.display().to_string(),
            variant: job.variant.clone(),
            cc: job.cc.clone(),
            cc_version: self.cc_version,
            flags: job.flags.clone(),
            algname: self.algname,
            public_key: self.sizes[0],
            secret_key: self.sizes[1],
            ciphertext: self.sizes[2],
            shared_secret: self.sizes[3],
            requires: self.requires,
            source_version: job.source_version.clone(),
            probes: self.probes,
            probe_notes: self.probe_notes,
        }
    }
}

/// Writes the manifest into the finished build in `tmp` and moves it to `out_dir`
/// (replacing an earlier build with the same label).
fn install(tmp: &Path, out_dir: &Path, m: Manifest) -> std::result::Result<(PathBuf, Manifest), String> {
    std::fs::write(
        tmp.join(builds::MANIFEST),
        serde_json::to_string_pretty(&m).unwrap_or_default(),
    )
    .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(out_dir);
    std::fs::rename(tmp, out_dir).map_err(|e| format!("cannot move the build to {}: {e}", out_dir.display()))?;
    Ok((out_dir.to_path_buf(), m))
}

/// Runs a compiler command; on failure, its first real error as one line.
fn run_compiler(cmd: &mut Command, cc: &str, source: &Path) -> std::result::Result<(), String> {
    let out = cmd.output().map_err(|e| format!("cannot run {cc}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    // A compiler diagnostic or an undefined symbol, not the driver's closing "linker
    // command failed".
    let first = err
        .lines()
        .find(|l| l.contains("error:") && !l.contains("collect2") && !l.contains("linker command failed"))
        .or_else(|| err.lines().find(|l| l.contains("undefined reference")))
        .or_else(|| err.lines().find(|l| l.contains("error")))
        .or_else(|| err.lines().next())
        .unwrap_or("no message");
    Err(format!("{cc} failed for {}: {first}", source.display()))
}

/// `f` over `items` on as many threads as the machine has CPUs, results in order; the
/// first error (in item order) wins.
type ItemFn<'a, T, R> = dyn Fn((usize, &T)) -> std::result::Result<R, String> + Sync + 'a;

fn parallel_map<T: Sync, R: Send>(items: &[T], f: &ItemFn<'_, T, R>) -> std::result::Result<Vec<R>, String> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<std::result::Result<R, String>>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if k >= items.len() {
                    break;
                }
                let r = f((k, &items[k]));
                *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| Err("not compiled".into()))
        })
        .collect()
}

/// Splits "gcc,clang" and checks each compiler runs.
pub fn compilers(list: &str) -> Result<Vec<String>> {
    let v: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if v.is_empty() {
        bail!(crate::ui::usage("--cc needs at least one compiler, e.g. gcc,clang"));
    }
    for cc in &v {
        compiler_version(cc).map_err(crate::ui::usage)?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_headers_plain_and_namespaced() {
        let plain = "#define CRYPTO_SECRETKEYBYTES 1632\n#define CRYPTO_PUBLICKEYBYTES 800\n\
#define CRYPTO_CIPHERTEXTBYTES 768\n#define CRYPTO_BYTES 32\n#define CRYPTO_ALGNAME \"ML-KEM-512\"\n";
        let a = parse_api(plain).unwrap();
        assert_eq!((a.prefix.as_str(), a.public_key, a.ciphertext), ("", 800, 768));
        assert_eq!(a.algname, "ML-KEM-512");
        let ns = plain.replace("CRYPTO_", "PQCLEAN_X_CLEAN_CRYPTO_");
        assert_eq!(parse_api(&ns).unwrap().prefix, "PQCLEAN_X_CLEAN_");
        assert!(parse_api(&plain.replace("CRYPTO_BYTES 32", "CRYPTO_BYTES lots"))
            .unwrap_err()
            .contains("CRYPTO_BYTES"));
        assert!(parse_api("#define CRYPTO_BYTES 32\n")
            .unwrap_err()
            .contains("CRYPTO_PUBLICKEYBYTES"));
        let mixed = plain.replace("#define CRYPTO_BYTES", "#define OTHER_CRYPTO_BYTES");
        assert!(parse_api(&mixed).unwrap_err().contains("mixes prefixes"));
    }

    #[test]
    fn labels_name_compiler_version_and_flags() {
        let gcc = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0";
        assert_eq!(major(gcc), "12");
        assert_eq!(major("Debian clang version 14.0.6"), "14");
        let f = vec!["-O3 -march=native".to_string()];
        assert_eq!(label("clean", "gcc", gcc, &f), "clean-gcc12-O3_march=native");
        assert_eq!(
            label("avx2", "/usr/bin/clang", "Debian clang version 14.0.6", &[]),
            "avx2-clang14-default"
        );
    }

    #[test]
    fn pqclean_directory_names() {
        assert_eq!(pqclean_name("Classic-McEliece-8192128f").0, "mceliece8192128f");
        assert_eq!(pqclean_name("NTRU-HRSS-701").0, "ntruhrss701");
        assert_eq!(pqclean_name("NTRU-HPS-2048-509").0, "ntruhps2048509");
        assert_eq!(pqclean_name("ML-KEM-768").0, "ml-kem-768");
        assert_eq!(pqclean_name("HQC-128").0, "hqc-128");
    }
}
