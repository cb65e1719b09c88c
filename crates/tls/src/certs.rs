//! Test certificates: a CA and a server certificate for `localhost` (and the addresses the
//! driver listens on), both with the requested key type, written as PEM into a private
//! directory. RSA, ECDSA and Ed25519 are made with OpenSSL, which also makes the RSA-1024 keys
//! the 2010s study used and AWS-LC no longer generates. ML-DSA (FIPS 204), which Debian's
//! OpenSSL 3.0 does not have, is made with `rcgen` on AWS-LC's ML-DSA: public keys and
//! signatures with the identifiers of RFC 9881 (id-ml-dsa-44/65/87, parameters absent), the
//! private key as PKCS#8 holding the 32-byte seed.

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
    "mldsa-44",
    "mldsa-65",
    "mldsa-87",
];

/// The ML-DSA parameter set of an `mldsa-*` type; `None` for the types OpenSSL makes.
fn mldsa(alg: &str) -> Option<&'static rcgen::SignatureAlgorithm> {
    match alg {
        "mldsa-44" => Some(&rcgen::PKCS_ML_DSA_44),
        "mldsa-65" => Some(&rcgen::PKCS_ML_DSA_65),
        "mldsa-87" => Some(&rcgen::PKCS_ML_DSA_87),
        _ => None,
    }
}

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

/// The PEM files of one CA and server certificate: (CA, server, the server's PKCS#8 key).
type Pems = (Vec<u8>, Vec<u8>, zeroize::Zeroizing<Vec<u8>>);

/// With OpenSSL: RSA, ECDSA and Ed25519.
fn with_openssl(alg: &str, ips: &[String]) -> Result<Pems> {
    let ca_key = key(alg)?;
    let ca = build("cryptoscope test CA", &ca_key, None, true, alg, &[])?;
    let leaf_key = key(alg)?;
    let leaf = build("localhost", &leaf_key, Some((&ca, &ca_key)), false, alg, ips)?;
    // The key's PEM is wiped once written (the key objects themselves are freed by OpenSSL,
    // which cleanses private key material).
    let pem = zeroize::Zeroizing::new(leaf_key.private_key_to_pem_pkcs8()?);
    Ok((ca.to_pem()?, leaf.to_pem()?, pem))
}

/// rcgen's parameters for the CA or the server certificate, as `build` makes them with
/// OpenSSL: random 120-bit serial, valid from now for 30 days; the server certificate for
/// DNS `localhost` and `ips`, digitalSignature only (RFC 9881 allows no keyEncipherment
/// for ML-DSA keys).
fn params(cn: &str, ca: bool, ips: &[String]) -> Result<rcgen::CertificateParams> {
    use rcgen::{BasicConstraints, DnType, ExtendedKeyUsagePurpose as Eku, IsCa, KeyUsagePurpose as Ku};
    let mut p = rcgen::CertificateParams::default();
    p.distinguished_name = rcgen::DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, cn);
    let mut serial = [0u8; 15];
    aws_lc_rs::rand::fill(&mut serial).map_err(|_| anyhow::anyhow!("no randomness for the serial"))?;
    serial[0] &= 0x7f;
    p.serial_number = Some(rcgen::SerialNumber::from_slice(&serial));
    let now = time::OffsetDateTime::now_utc();
    p.not_before = now;
    p.not_after = now + time::Duration::days(30);
    if ca {
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![Ku::KeyCertSign, Ku::CrlSign];
    } else {
        p.is_ca = IsCa::ExplicitNoCa;
        p.key_usages = vec![Ku::DigitalSignature];
        // clientAuth too, as for the other types.
        p.extended_key_usages = vec![Eku::ServerAuth, Eku::ClientAuth];
        p.subject_alt_names
            .push(rcgen::SanType::DnsName("localhost".try_into()?));
        for ip in ips {
            let addr = ip.parse().with_context(|| format!("`{ip}` is not an IP address"))?;
            p.subject_alt_names.push(rcgen::SanType::IpAddress(addr));
        }
    }
    Ok(p)
}

/// With rcgen on AWS-LC: ML-DSA.
fn with_rcgen(alg: &'static rcgen::SignatureAlgorithm, ips: &[String]) -> Result<Pems> {
    use zeroize::Zeroize;
    let mut ca_key = rcgen::KeyPair::generate_for(alg)?;
    let ca_params = params("cryptoscope test CA", true, &[])?;
    let ca = ca_params.self_signed(&ca_key)?;
    let mut leaf_key = rcgen::KeyPair::generate_for(alg)?;
    let leaf =
        params("localhost", false, ips)?.signed_by(&leaf_key, &rcgen::Issuer::from_params(&ca_params, &ca_key))?;
    let pem = pkcs8_pem(&zeroize::Zeroizing::new(leaf_key.serialize_der()));
    // rcgen keeps a PKCS#8 copy of each key: wiped here (AWS-LC cleanses its own key objects
    // when it frees them).
    ca_key.zeroize();
    leaf_key.zeroize();
    Ok((ca.pem().into_bytes(), leaf.pem().into_bytes(), pem))
}

/// A PKCS#8 key as PEM, every intermediate buffer wiped (rcgen's `serialize_pem` leaves
/// copies behind).
fn pkcs8_pem(der: &[u8]) -> zeroize::Zeroizing<Vec<u8>> {
    let (begin, end) = (
        &b"-----BEGIN PRIVATE KEY-----\n"[..],
        &b"-----END PRIVATE KEY-----\n"[..],
    );
    let b64 = zeroize::Zeroizing::new(openssl::base64::encode_block(der));
    let lines = b64.len().div_ceil(64);
    let mut pem = zeroize::Zeroizing::new(Vec::with_capacity(begin.len() + b64.len() + lines + end.len()));
    pem.extend_from_slice(begin);
    for line in b64.as_bytes().chunks(64) {
        pem.extend_from_slice(line);
        pem.push(b'\n');
    }
    pem.extend_from_slice(end);
    pem
}

/// Writes `ca.pem`, `chain.pem` (server then CA) and `key.pem` (PKCS#8) into `dir`.
pub fn generate(alg: &str, dir: &Path, ips: &[String]) -> Result<()> {
    check_alg(alg)?;
    let (ca, leaf, key) = match mldsa(alg) {
        Some(a) => with_rcgen(a, ips)?,
        None => with_openssl(alg, ips)?,
    };
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
    write("ca.pem", &ca)?;
    let mut chain = leaf;
    chain.extend(&ca);
    write("chain.pem", &chain)?;
    write("key.pem", &key)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection, SignatureScheme};
    use std::sync::Arc;

    const X25519: &dyn rustls::crypto::SupportedKxGroup = rustls::crypto::aws_lc_rs::kx_group::X25519;

    fn make(alg: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        generate(alg, d.path(), &["127.0.0.1".into()]).unwrap();
        d
    }

    fn pems(path: &Path) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_file_iter(path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn roots(dir: &Path) -> RootCertStore {
        let mut r = RootCertStore::empty();
        for c in pems(&dir.join("ca.pem")) {
            r.add(c).unwrap();
        }
        r
    }

    /// Runs a handshake between the two configurations in memory.
    fn handshake(server: Arc<ServerConfig>, client: Arc<ClientConfig>) -> Result<(), rustls::Error> {
        let mut c = ClientConnection::new(client, ServerName::try_from("localhost").unwrap())?;
        let mut s = ServerConnection::new(server)?;
        for _ in 0..10 {
            let mut buf = Vec::new();
            while c.wants_write() {
                c.write_tls(&mut buf).unwrap();
            }
            let mut rd = &buf[..];
            while !rd.is_empty() {
                s.read_tls(&mut rd).unwrap();
                s.process_new_packets()?;
            }
            let mut buf = Vec::new();
            while s.wants_write() {
                s.write_tls(&mut buf).unwrap();
            }
            let mut rd = &buf[..];
            while !rd.is_empty() {
                c.read_tls(&mut rd).unwrap();
                c.process_new_packets()?;
            }
            if !c.is_handshaking() && !s.is_handshaking() {
                return Ok(());
            }
        }
        panic!("the handshake did not finish");
    }

    #[test]
    fn every_type_makes_a_chain_that_webpki_verifies_for_localhost_and_the_ip() {
        let provider = crate::serve::provider(X25519);
        for alg in ALGS {
            let d = make(alg);
            let chain = pems(&d.path().join("chain.pem"));
            assert_eq!(chain.len(), 2, "{alg}: server then CA");
            let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(d.path())),
                provider.clone(),
            )
            .build()
            .unwrap();
            for name in ["localhost", "127.0.0.1"] {
                let r = v.verify_server_cert(
                    &chain[0],
                    &chain[1..],
                    &ServerName::try_from(name).unwrap(),
                    &[],
                    UnixTime::now(),
                );
                if *alg == "rsa-1024" {
                    // Why rsa-1024 is for the OpenSSL peer only.
                    assert!(r.is_err(), "webpki took an RSA-1024 chain");
                } else {
                    r.unwrap_or_else(|e| panic!("{alg} for {name}: {e}"));
                }
            }
            if *alg != "rsa-1024" {
                // The key loads and matches the certificate.
                crate::serve::config(d.path(), X25519).unwrap_or_else(|e| panic!("{alg}: {e:#}"));
            }
        }
    }

    #[test]
    fn mldsa_certificates_and_keys_use_the_rfc_9881_identifiers() {
        use rustls::pki_types::{alg_id, PrivateKeyDer};
        let sets = [
            ("mldsa-44", alg_id::ML_DSA_44, SignatureScheme::ML_DSA_44),
            ("mldsa-65", alg_id::ML_DSA_65, SignatureScheme::ML_DSA_65),
            ("mldsa-87", alg_id::ML_DSA_87, SignatureScheme::ML_DSA_87),
        ];
        for (alg, id, scheme) in sets {
            let d = make(alg);
            // AlgorithmIdentifier: SEQUENCE { OID } with parameters absent, three times in
            // each certificate (signature, subjectPublicKeyInfo, signatureAlgorithm).
            let mut seq = vec![0x30, id.len() as u8];
            seq.extend_from_slice(id.as_ref());
            for cert in pems(&d.path().join("chain.pem")) {
                let n = cert.windows(seq.len()).filter(|w| *w == &seq[..]).count();
                assert_eq!(n, 3, "{alg}");
            }
            // The PKCS#8 key is the parameter set's, and signs with its scheme only.
            let der = PrivateKeyDer::from_pem_file(d.path().join("key.pem")).unwrap();
            let key = rustls::crypto::aws_lc_rs::sign::any_supported_type(&der).unwrap();
            assert!(key.choose_scheme(&[scheme]).is_some(), "{alg}");
            let others: Vec<_> = sets.iter().map(|s| s.2).filter(|s| *s != scheme).collect();
            assert!(key.choose_scheme(&others).is_none(), "{alg}");
            assert!(key.choose_scheme(&[SignatureScheme::ED25519]).is_none(), "{alg}");
        }
    }

    #[test]
    fn the_server_signs_with_the_certificates_scheme_and_the_client_verifies_it() {
        let cases = [
            ("mldsa-44", SignatureScheme::ML_DSA_44),
            ("mldsa-65", SignatureScheme::ML_DSA_65),
            ("mldsa-87", SignatureScheme::ML_DSA_87),
            ("ecdsa-p256", SignatureScheme::ECDSA_NISTP256_SHA256),
            ("ed25519", SignatureScheme::ED25519),
        ];
        for (alg, scheme) in cases {
            let d = make(alg);
            let server = crate::serve::config(d.path(), X25519).unwrap();
            let (cfg, probe, noted) = crate::load::client_configs(roots(d.path()), X25519, false).unwrap();
            handshake(server.clone(), cfg).unwrap_or_else(|e| panic!("{alg}: {e}"));
            assert_eq!(noted.scheme(), None, "the measured configuration notes nothing");
            handshake(server, probe).unwrap_or_else(|e| panic!("{alg}: {e}"));
            assert_eq!(noted.scheme(), Some(scheme), "{alg}");
        }
    }

    #[test]
    fn a_client_refuses_an_mldsa_chain_from_another_ca() {
        let (a, b) = (make("mldsa-65"), make("mldsa-65"));
        let server = crate::serve::config(a.path(), X25519).unwrap();
        let (cfg, _, _) = crate::load::client_configs(roots(b.path()), X25519, false).unwrap();
        let e = handshake(server, cfg).unwrap_err();
        assert!(matches!(e, rustls::Error::InvalidCertificate(_)), "{e}");
    }
}
