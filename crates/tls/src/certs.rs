//! Test certificates: a CA and a server certificate for `localhost` (and the addresses the
//! driver listens on), both with the requested key type, written as PEM into a private
//! directory. Made with OpenSSL, which also makes the RSA-1024 keys the 2010s study used and
//! AWS-LC no longer generates.

use anyhow::{bail, Context, Result};
use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName};
use openssl::x509::{X509Builder, X509NameBuilder, X509};
use std::path::Path;

/// Certificate key types, by the names the CLI takes.
pub const ALGS: &[&str] = &[
    "rsa-1024",
    "rsa-2048",
    "rsa-3072",
    "rsa-4096",
    "ecdsa-p256",
    "ecdsa-p384",
    "ed25519",
];

pub fn check_alg(alg: &str) -> Result<()> {
    if ALGS.contains(&alg) {
        Ok(())
    } else {
        bail!("unknown certificate type `{alg}` (one of: {})", ALGS.join(", "))
    }
}

fn key(alg: &str) -> Result<PKey<Private>> {
    Ok(match alg {
        "rsa-1024" => PKey::from_rsa(Rsa::generate(1024)?)?,
        "rsa-2048" => PKey::from_rsa(Rsa::generate(2048)?)?,
        "rsa-3072" => PKey::from_rsa(Rsa::generate(3072)?)?,
        "rsa-4096" => PKey::from_rsa(Rsa::generate(4096)?)?,
        "ecdsa-p256" => PKey::from_ec_key(EcKey::generate(
            EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?.as_ref(),
        )?)?,
        "ecdsa-p384" => PKey::from_ec_key(EcKey::generate(EcGroup::from_curve_name(Nid::SECP384R1)?.as_ref())?)?,
        "ed25519" => PKey::generate_ed25519()?,
        other => bail!("unknown certificate type `{other}`"),
    })
}

fn digest(alg: &str) -> MessageDigest {
    match alg {
        "ed25519" => MessageDigest::null(),
        "ecdsa-p384" => MessageDigest::sha384(),
        _ => MessageDigest::sha256(),
    }
}

fn build(
    cn: &str,
    key: &PKey<Private>,
    issuer: Option<(&X509, &PKey<Private>)>,
    ca: bool,
    alg: &str,
    ips: &[String],
) -> Result<X509> {
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_text("CN", cn)?;
    let name = name.build();
    let mut b = X509Builder::new()?;
    b.set_version(2)?;
    let mut serial = BigNum::new()?;
    serial.rand(120, MsbOption::MAYBE_ZERO, false)?;
    b.set_serial_number(serial.to_asn1_integer()?.as_ref())?;
    b.set_subject_name(&name)?;
    b.set_issuer_name(issuer.map(|(c, _)| c.subject_name()).unwrap_or(&name))?;
    b.set_pubkey(key)?;
    b.set_not_before(Asn1Time::days_from_now(0)?.as_ref())?;
    b.set_not_after(Asn1Time::days_from_now(30)?.as_ref())?;
    if ca {
        b.append_extension(BasicConstraints::new().critical().ca().build()?)?;
        b.append_extension(KeyUsage::new().critical().key_cert_sign().crl_sign().build()?)?;
    } else {
        b.append_extension(BasicConstraints::new().critical().build()?)?;
        b.append_extension(
            KeyUsage::new()
                .critical()
                .digital_signature()
                .key_encipherment()
                .build()?,
        )?;
        // clientAuth too: OpenVPN's point-to-point TLS mode presents the same certificate from both ends.
        b.append_extension(ExtendedKeyUsage::new().server_auth().client_auth().build()?)?;
        let mut san = SubjectAlternativeName::new();
        san.dns("localhost");
        for ip in ips {
            san.ip(ip);
        }
        let ctx = b.x509v3_context(issuer.map(|(c, _)| c.as_ref()), None);
        let ext = san.build(&ctx)?;
        b.append_extension(ext)?;
    }
    let signer = issuer.map(|(_, k)| k).unwrap_or(key);
    b.sign(signer, digest(alg))?;
    Ok(b.build())
}

/// Writes `ca.pem`, `chain.pem` (server then CA) and `key.pem` (PKCS#8) into `dir`.
pub fn generate(alg: &str, dir: &Path, ips: &[String]) -> Result<()> {
    check_alg(alg)?;
    let ca_key = key(alg)?;
    let ca = build("cryptoscope test CA", &ca_key, None, true, alg, &[])?;
    let leaf_key = key(alg)?;
    let leaf = build("localhost", &leaf_key, Some((&ca, &ca_key)), false, alg, ips)?;
    let write = |name: &str, bytes: &[u8]| -> Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = dir.join(name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&p)
            .with_context(|| format!("cannot write {}", p.display()))?;
        std::io::Write::write_all(&mut f, bytes)?;
        Ok(())
    };
    write("ca.pem", &ca.to_pem()?)?;
    let mut chain = leaf.to_pem()?;
    chain.extend(ca.to_pem()?);
    write("chain.pem", &chain)?;
    // The key's PEM is wiped once written (the key objects themselves are freed by OpenSSL,
    // which cleanses private key material).
    let pem = zeroize::Zeroizing::new(leaf_key.private_key_to_pem_pkcs8()?);
    write("key.pem", &pem)?;
    Ok(())
}
