//! Camellia-128/256, every strategy: the published vectors, cross-checks against
//! RustCrypto's `camellia` crate (independent) and the naive strategy, CTR mode, and the
//! inner functions against the naive strategy's.
//!
//! cargo test --release -p cryptoscope-ciphers --test camellia

use camellia::cipher::{BlockCipherEncrypt, KeyInit};
use cryptoscope_ciphers::{strategies, Func, Keyed, Strategy};

const CIPHERS: [&str; 2] = ["Camellia-128", "Camellia-256"];

/// Available strategies of `cipher`, naive first; unavailable ones are reported and skipped.
fn strategies_of(cipher: &str) -> Vec<Box<dyn Strategy>> {
    let mut v: Vec<Box<dyn Strategy>> = strategies().into_iter().filter(|s| s.info().cipher == cipher).collect();
    v.retain(|s| {
        if !s.available() {
            println!("skipped {} {}: not available on this CPU", cipher, s.info().strategy);
        }
        s.available()
    });
    v.sort_by_key(|s| s.info().strategy != "naive");
    assert_eq!(v[0].info().strategy, "naive");
    assert!(v.len() >= 2, "{cipher}: naive and table at least");
    v
}

/// The independent implementation: RustCrypto's `camellia`.
enum Reference {
    C128(camellia::Camellia128),
    C256(camellia::Camellia256),
}

impl Reference {
    fn new(key: &[u8]) -> Self {
        match key.len() {
            16 => Reference::C128(camellia::Camellia128::new_from_slice(key).unwrap()),
            32 => Reference::C256(camellia::Camellia256::new_from_slice(key).unwrap()),
            n => panic!("no {n}-byte Camellia here"),
        }
    }

    fn encrypt(&self, block: &[u8]) -> [u8; 16] {
        let mut b = camellia::cipher::Block::<camellia::Camellia128>::try_from(block).unwrap();
        match self {
            Reference::C128(c) => c.encrypt_block(&mut b),
            Reference::C256(c) => c.encrypt_block(&mut b),
        }
        b.into()
    }

    fn ecb(&self, data: &[u8]) -> Vec<u8> {
        data.chunks_exact(16).flat_map(|b| self.encrypt(b)).collect()
    }

    /// CTR mode: counter = the whole block, big-endian, wrapping.
    fn ctr(&self, iv: &[u8; 16], data: &[u8]) -> Vec<u8> {
        let mut counter = u128::from_be_bytes(*iv);
        let mut out = Vec::with_capacity(data.len());
        for chunk in data.chunks(16) {
            let ks = self.encrypt(&counter.to_be_bytes());
            out.extend(chunk.iter().zip(ks).map(|(d, k)| d ^ k));
            counter = counter.wrapping_add(1);
        }
        out
    }
}

/// xorshift64*: reproducible test data, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn label(s: &dyn Strategy) -> String {
    format!("{} {}", s.info().cipher, s.info().strategy)
}

#[test]
fn published_vectors() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../vectors/block-ciphers/camellia.json"
    ))
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for row in json["vectors"].as_array().unwrap() {
        let cipher = row["cipher"].as_str().unwrap();
        if !CIPHERS.contains(&cipher) {
            continue; // Camellia-192 is not implemented.
        }
        let [key, pt, ct] = ["key", "plaintext", "ciphertext"].map(|f| unhex(row[f].as_str().unwrap()));
        for s in strategies_of(cipher) {
            let k = s.schedule(&key);
            // One block, then a batch and a half with the vector in every slot.
            let mut one = pt.clone();
            k.encrypt(&mut one);
            assert_eq!(one, ct, "{} on {row}", label(&*s));
            let n = s.info().batch + 3;
            let mut many = pt.repeat(n);
            k.encrypt(&mut many);
            assert_eq!(many, ct.repeat(n), "{} on {row}, {n} blocks", label(&*s));
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} vector checks");
}

#[test]
fn random_single_blocks_match_camellia_crate_and_naive() {
    for (c, cipher) in CIPHERS.into_iter().enumerate() {
        let strats = strategies_of(cipher);
        let key_bytes = strats[0].info().key_bytes;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 + c as u64);
        let mut keyed: Vec<Box<dyn Keyed>> = strats.iter().map(|s| s.schedule(&[0; 32][..key_bytes])).collect();
        for _ in 0..10_000 {
            let key = rng.bytes(key_bytes);
            let block = rng.bytes(16);
            let expected = Reference::new(&key).encrypt(&block);
            let mut naive = None;
            for (s, k) in strats.iter().zip(&mut keyed) {
                k.rekey(&key);
                let mut b = block.clone();
                k.encrypt(&mut b);
                assert_eq!(b, expected, "{} key {key:02x?} block {block:02x?}", label(&**s));
                // strats[0] is the naive strategy.
                assert_eq!(
                    &b,
                    naive.get_or_insert_with(|| b.clone()),
                    "{} against naive",
                    label(&**s)
                );
            }
        }
    }
}

#[test]
fn random_ecb_counts_match_camellia_crate_and_naive() {
    for (c, cipher) in CIPHERS.into_iter().enumerate() {
        let strats = strategies_of(cipher);
        let key_bytes = strats[0].info().key_bytes;
        let mut rng = Rng(0x1234_5678_9ABC_DEF1 + c as u64);
        for _ in 0..100 {
            let key = rng.bytes(key_bytes);
            let reference = Reference::new(&key);
            let naive = strats[0].schedule(&key);
            for s in &strats {
                let k = s.schedule(&key);
                let batch = s.info().batch;
                for n in [1, 7, batch, batch + 3, 2 * batch + 5, 64] {
                    let data = rng.bytes(16 * n);
                    let mut got = data.clone();
                    k.encrypt(&mut got);
                    assert_eq!(got, reference.ecb(&data), "{}, {n} blocks", label(&**s));
                    let mut by_naive = data.clone();
                    naive.encrypt(&mut by_naive);
                    assert_eq!(got, by_naive, "{}, {n} blocks, against naive", label(&**s));
                }
            }
        }
    }
}

#[test]
fn random_ctr_matches_camellia_crate() {
    for (c, cipher) in CIPHERS.into_iter().enumerate() {
        let strats = strategies_of(cipher);
        let key_bytes = strats[0].info().key_bytes;
        let mut rng = Rng(0x0F1E_2D3C_4B5A_6978 + c as u64);
        for i in 0..60 {
            let key = rng.bytes(key_bytes);
            let reference = Reference::new(&key);
            let mut iv: [u8; 16] = rng.bytes(16).try_into().unwrap();
            if i % 3 == 0 {
                // Near the wrap of the lower 64 bits, and of the whole block.
                iv[8..].fill(0xff);
                if i % 2 == 0 {
                    iv.fill(0xff);
                }
                iv[15] = 0xf0;
            }
            for len in [1, 15, 16, 100, 1000, 4096, 4096 + 5] {
                let data = rng.bytes(len);
                let expected = reference.ctr(&iv, &data);
                for s in &strats {
                    let mut got = data.clone();
                    s.schedule(&key).ctr(&iv, &mut got);
                    assert_eq!(got, expected, "{}, ctr of {len} bytes, iv {iv:02x?}", label(&**s));
                }
            }
        }
    }
}

/// `batch` copies of `p`, with `q` in slot `odd`.
fn slots(p: &[u8], q: &[u8], batch: usize, odd: usize) -> Vec<u8> {
    let mut v = p.repeat(batch);
    v[16 * odd..16 * odd + 16].copy_from_slice(q);
    v
}

/// Applies `f` of `round` to the blocks through the strategy's state.
fn through_state(k: &dyn Keyed, batch: usize, blocks: &[u8], f: Func, round: usize) -> Vec<u8> {
    let mut state = vec![0; k.state_bytes()];
    k.load(blocks, &mut state);
    k.call(f, &mut state, round);
    let mut out = vec![0; 16 * batch];
    k.store(&state, &mut out);
    out
}

#[test]
fn inner_functions_match_naive() {
    for (c, cipher) in CIPHERS.into_iter().enumerate() {
        let strats = strategies_of(cipher);
        let (rounds, layers) = if cipher == "Camellia-128" { (18, 2) } else { (24, 3) };
        let mut rng = Rng(0xDEAD_BEEF_0BAD_F00D + c as u64);
        for _ in 0..50 {
            let key = rng.bytes(strats[0].info().key_bytes);
            let naive = strats[0].schedule(&key);
            for s in &strats {
                let k = s.schedule(&key);
                assert!(k.functions().contains(&Func::Feistel) && k.functions().contains(&Func::Fl));
                let batch = s.info().batch;
                let odd = (rng.next() as usize) % batch;
                let (p, q) = (rng.bytes(16), rng.bytes(16));
                let blocks = slots(&p, &q, batch, odd);
                // load/store round trip.
                let mut state = vec![0; k.state_bytes()];
                k.load(&blocks, &mut state);
                let mut back = vec![0; 16 * batch];
                k.store(&state, &mut back);
                assert_eq!(back, blocks, "{} load/store", label(&**s));
                let calls = (0..rounds)
                    .map(|r| (Func::Feistel, r))
                    .chain((0..layers).map(|l| (Func::Fl, l)));
                for (f, round) in calls {
                    let want_p = through_state(&*naive, 1, &p, f, round);
                    let want_q = through_state(&*naive, 1, &q, f, round);
                    let got = through_state(&*k, batch, &blocks, f, round);
                    assert_eq!(
                        got,
                        slots(&want_p, &want_q, batch, odd),
                        "{} {} round {round}",
                        label(&**s),
                        f.name()
                    );
                }
            }
        }
    }
}

/// A whole encryption composed of exposed calls: the pre-whitening `kw1 || kw2` is the
/// key's first 16 bytes (RFC 3713), and after the rounds `C = (D2 ^ kw3) || (D1 ^ kw4)`,
/// so `C ^ swap(composed)` must be one constant (kw3 || kw4) for every block of a key, and
/// the same for every strategy.
#[test]
fn composed_calls_encrypt() {
    for (c, cipher) in CIPHERS.into_iter().enumerate() {
        let strats = strategies_of(cipher);
        let rounds: usize = if cipher == "Camellia-128" { 18 } else { 24 };
        let mut rng = Rng(0x5151_7272_9393_B4B4 + c as u64);
        for _ in 0..20 {
            let key = rng.bytes(strats[0].info().key_bytes);
            let reference = Reference::new(&key);
            let mut post_whitening: Option<Vec<u8>> = None;
            for s in &strats {
                let k = s.schedule(&key);
                let batch = s.info().batch;
                let blocks = rng.bytes(16 * batch);
                let whitened: Vec<u8> = blocks.iter().enumerate().map(|(i, b)| b ^ key[i % 16]).collect();
                let mut state = vec![0; k.state_bytes()];
                k.load(&whitened, &mut state);
                for r in 0..rounds {
                    if r > 0 && r.is_multiple_of(6) {
                        k.call(Func::Fl, &mut state, r / 6 - 1);
                    }
                    k.call(Func::Feistel, &mut state, r);
                }
                let mut out = vec![0; 16 * batch];
                k.store(&state, &mut out);
                for (b, o) in blocks.chunks_exact(16).zip(out.chunks_exact(16)) {
                    let ct = reference.encrypt(b);
                    let kw: Vec<u8> = (0..16).map(|i| ct[i] ^ o[(i + 8) % 16]).collect();
                    let want = post_whitening.get_or_insert_with(|| kw.clone());
                    assert_eq!(&kw, want, "{} composed", label(&**s));
                }
            }
        }
    }
}
