//! The TLS driver of cryptoscope, run as its own process by `cryptoscope tls`: it makes test
//! certificates, serves TLS 1.3 with rustls (AWS-LC) and generates load with rustls or
//! OpenSSL clients. Catalogue KEMs become experimental TLS 1.3 groups; which KEMs depends
//! on the provider this binary links (liboqs here; PQClean in `cryptoscope-tls-pqclean`,
//! because the two cannot share a binary).
//!
//! Every subcommand prints one JSON document (or line) on stdout; errors go to stderr with
//! exit code 2.

pub mod certs;
pub mod groups;
pub mod load;
pub mod serve;
pub mod serve_openssl;
pub mod wire;

use clap::{Parser, Subcommand};
use cryptoscope_catalogue::Subject;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The provider's subject list and its name, set once by the driver binary.
type SubjectList = (fn() -> Vec<Subject>, &'static str);

static SUBJECTS: OnceLock<SubjectList> = OnceLock::new();

/// Seeds this thread's random generators before anything is timed. AWS-LC gathers CPU
/// jitter entropy the first time a process (and a thread) asks for randomness, which on a
/// virtual machine takes from milliseconds to over a second; left to the first handshake,
/// it lands in the measured window.
pub fn warm_thread() {
    let mut b = [0u8; 32];
    let _ = aws_lc_rs::rand::fill(&mut b);
    let _ = openssl::rand::rand_bytes(&mut b);
}

/// The KEM catalogue of the provider this binary links.
pub fn provider_subjects() -> fn() -> Vec<Subject> {
    SUBJECTS.get().map(|s| s.0).unwrap_or(Vec::new)
}

#[derive(Parser)]
#[command(about = "cryptoscope's TLS driver (started by `cryptoscope tls`; not meant to be run by hand)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write ca.pem, chain.pem and key.pem for a key type into DIR.
    Certs {
        #[arg(long)]
        alg: String,
        #[arg(long)]
        dir: PathBuf,
        /// IP addresses for the server certificate (besides DNS localhost).
        #[arg(long)]
        ip: Vec<String>,
    },
    /// Serve TLS 1.3 with one group until killed.
    Serve {
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        group: String,
        /// Serve with the OpenSSL this binary links (groups in OpenSSL's names) instead
        /// of rustls.
        #[arg(long)]
        openssl: bool,
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: String,
        #[arg(long, default_value_t = 16)]
        threads: usize,
    },
    /// Run the clients and print the measurements.
    Load(load::LoadArgs),
    /// Resolve group names: sizes, code points, whether they fit.
    Groups { names: Vec<String> },
    /// Print the version of the OpenSSL this binary links.
    OpensslVersion,
}

/// The binary's main: `subjects` is the linked provider's catalogue.
pub fn main(subjects: fn() -> Vec<Subject>, provider: &'static str) -> ! {
    SUBJECTS.set((subjects, provider)).ok();
    let cli = Cli::parse();
    let r: anyhow::Result<()> = (|| {
        match cli.cmd {
            Cmd::Certs { alg, dir, ip } => certs::generate(&alg, &dir, &ip)?,
            Cmd::Serve {
                dir,
                group,
                openssl: true,
                listen,
                threads,
            } => serve_openssl::serve(serve_openssl::acceptor(&dir, &group)?, &listen, threads)?,
            Cmd::Serve {
                dir,
                group,
                openssl: false,
                listen,
                threads,
            } => {
                let subjects = subjects();
                let r = groups::resolve(&group, &subjects).map_err(anyhow::Error::msg)?;
                let g = r
                    .group
                    .ok_or_else(|| anyhow::anyhow!("{group} does not fit in a TLS key share"))?;
                serve::serve(serve::config(&dir, g)?, &listen, threads)?
            }
            Cmd::Load(a) => println!("{}", load::load(&a)?),
            Cmd::OpensslVersion => println!("{}", openssl::version::version()),
            Cmd::Groups { names } => {
                let subjects = subjects();
                let out: Vec<serde_json::Value> = names
                    .iter()
                    .map(|n| match groups::resolve(n, &subjects) {
                        Ok(r) => serde_json::json!({"ok": r.info, "provider": provider}),
                        Err(e) => serde_json::json!({"name": n, "error": e}),
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(out))
            }
        }
        Ok(())
    })();
    match r {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2)
        }
    }
}
