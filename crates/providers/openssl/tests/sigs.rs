//! The system OpenSSL's signature subjects, called directly (no worker): repeated signing
//! and verifying with one prepared key, and the leak check `scripts/memcheck.sh` runs.

use cryptoscope_catalogue::traits::{OpError, Subject};
use cryptoscope_provider_openssl::subjects;

/// Every available subject but RSA-4096 (its key generation takes seconds): a key pair, and
/// `CS_SIG_CALLS` (default 2) signatures and verifications with one prepared key, a
/// tampered signature rejected each time. Under valgrind, two counts of calls leaving
/// the same heap show that a call leaks nothing.
#[test]
fn sign_and_verify_repeatedly() {
    let calls: usize = std::env::var("CS_SIG_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let msg = [0x5au8; 59];
    for s in subjects() {
        let Subject::Sig(s) = s else { continue };
        let d = s.descriptor();
        if d.algorithm.starts_with("RSA-4096") || !d.is_available() {
            continue;
        }
        let (mut pk, mut sk) = (vec![0u8; d.sizes.public_key], vec![0u8; d.sizes.secret_key]);
        let (np, ns) = s.keypair(&mut pk, &mut sk).unwrap();
        let mut signer = s.signer(&sk[..ns]).unwrap();
        let mut verifier = s.verifier(&pk[..np]).unwrap();
        let mut sig = vec![0u8; d.sizes.ciphertext];
        for _ in 0..calls {
            let n = signer.sign(&mut sig, &msg, &[]).unwrap();
            assert!(verifier.verify(&msg, &[], &sig[..n]).unwrap(), "{}", d.id);
            sig[n / 2] ^= 1;
            assert!(!verifier.verify(&msg, &[], &sig[..n]).unwrap(), "{}", d.id);
        }
        if !d.sig.as_ref().is_some_and(|i| i.context) {
            assert!(matches!(
                signer.sign(&mut sig, &msg, b"ctx"),
                Err(OpError::Unavailable(_))
            ));
        }
    }
}
