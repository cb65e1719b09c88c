//! GIFT-64, GIFT-128 and GIFTb-128, every strategy: known answers from
//! `vectors/block-ciphers/gift.json`, the designers' per-round traces (giftcipher/gift,
//! saved in `vectors/block-ciphers/gift-traces/`) for every exposed inner function, and
//! random cross-checks against the naive strategy (itself checked against the published
//! vectors and the `gift-cipher` crate).
//!
//! Expected values come only from published data: the vector files, and (for cross-checks)
//! other implementations that are themselves checked against that data.

use cryptoscope_ciphers::{gift, increment_be, Func, Keyed, Strategy};
use serde_json::Value;

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/block-ciphers/gift.json");
const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../vectors/block-ciphers/gift-traces");

/// gift.json: conventions and known-answer vectors.
fn vectors() -> Value {
    serde_json::from_str(&std::fs::read_to_string(VECTORS).unwrap()).unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The available GIFT strategies of `cipher`; unavailable ones are reported and skipped.
fn strategies(cipher: &str) -> Vec<Box<dyn Strategy>> {
    gift::strategies()
        .into_iter()
        .filter(|s| s.info().cipher == cipher)
        .filter(|s| {
            let ok = s.available();
            if !ok {
                println!("skipped: {} {} (not available on this CPU)", cipher, s.info().strategy);
            }
            ok
        })
        .collect()
}

fn naive(cipher: &str) -> Box<dyn Strategy> {
    gift::strategies()
        .into_iter()
        .find(|s| s.info().cipher == cipher && s.info().strategy == "naive")
        .unwrap()
}

/// Encrypts one block with a keyed strategy.
fn encrypt1(k: &dyn Keyed, block: &[u8]) -> Vec<u8> {
    let mut b = block.to_vec();
    k.encrypt(&mut b);
    b
}

#[test]
fn known_answers() {
    let v = vectors();
    let mut checked = 0;
    for vec in v["vectors"].as_array().unwrap() {
        let field = |name: &str| hex(vec[name].as_str().unwrap());
        let (mut key, mut pt, mut ct) = (field("key"), field("plaintext"), field("ciphertext"));
        let cipher = match (vec["cipher"].as_str().unwrap(), vec["convention"].as_str().unwrap()) {
            (c, "original") => c,
            ("GIFT-128", "giftb") => "GIFTb-128",
            (c, "little-endian") => {
                // The same cipher with key, plaintext and ciphertext byte-reversed.
                key.reverse();
                pt.reverse();
                ct.reverse();
                c
            }
            other => panic!("unknown convention {other:?}"),
        };
        for s in strategies(cipher) {
            let i = s.info();
            let k = s.schedule(&key);
            assert_eq!(encrypt1(&*k, &pt), ct, "{cipher} {} key {key:02x?}", i.strategy);
            // The same block in every slot of a full batch, and in a batch plus three.
            for n in [i.batch, i.batch + 3] {
                let mut blocks = pt.repeat(n);
                k.encrypt(&mut blocks);
                assert_eq!(blocks, ct.repeat(n), "{cipher} {} x{n}", i.strategy);
            }
            checked += 1;
        }
    }
    println!("{checked} (vector, strategy) pairs checked");
}

/// One designers' trace: the encryption section's lines `r: label: bytes`.
struct Trace {
    plaintext: Vec<u8>,
    key: Vec<u8>,
    ciphertext: Vec<u8>,
    /// Per round: after SubCells, after PermBits, after AddRoundKeys, updated key.
    rounds: Vec<[Vec<u8>; 4]>,
}

fn read_trace(name: &str) -> Trace {
    let text = std::fs::read_to_string(format!("{TRACES}/{name}")).unwrap();
    let text = text.split("decryption...").next().unwrap();
    let value = |prefix: &str| {
        let line = text.lines().find(|l| l.starts_with(prefix)).unwrap();
        hex(line.split('=').nth(1).unwrap())
    };
    let mut rounds: Vec<[Vec<u8>; 4]> = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(r), Some(label), Some(bytes)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let r: usize = r.trim().parse().unwrap();
        let slot = match label.trim() {
            "after SubCells" => 0,
            "after PermBits" => 1,
            "after AddRoundKeys" => 2,
            "updated Key" => 3,
            other => panic!("unexpected trace line {other}"),
        };
        if rounds.len() <= r {
            rounds.resize(r + 1, Default::default());
        }
        rounds[r][slot] = hex(bytes);
    }
    Trace {
        plaintext: value("Plaintext"),
        key: value("masterkey"),
        ciphertext: value("Ciphertext"),
        rounds,
    }
}

/// Applies inner function `f` of round `r` to a batch of blocks through load/call/store.
fn apply(k: &dyn Keyed, f: Func, r: usize, blocks: &[u8]) -> Vec<u8> {
    let mut state = vec![0u8; k.state_bytes()];
    k.load(blocks, &mut state);
    k.call(f, &mut state, r);
    let mut out = vec![0u8; blocks.len()];
    k.store(&state, &mut out);
    out
}

/// An original-convention GIFT-128 state in the GIFTb convention, by gift.json's
/// definition: bit `4i + j` of the state is bit `i` of the big-endian word `Sj`.
fn to_giftb(block: &[u8]) -> Vec<u8> {
    let x = u128::from_be_bytes(block.try_into().unwrap());
    (0..4)
        .flat_map(|j| {
            let s = (0..32).fold(0u32, |acc, i| acc | (((x >> (4 * i + j)) & 1) as u32) << i);
            s.to_be_bytes()
        })
        .collect()
}

impl Trace {
    /// The GIFT-128 trace with every state in the GIFTb convention (the key is unchanged).
    fn giftb(&self) -> Trace {
        Trace {
            plaintext: to_giftb(&self.plaintext),
            key: self.key.clone(),
            ciphertext: to_giftb(&self.ciphertext),
            rounds: self
                .rounds
                .iter()
                .map(|[a, b, c, k]| [to_giftb(a), to_giftb(b), to_giftb(c), k.clone()])
                .collect(),
        }
    }
}

#[test]
fn traces() {
    let v = vectors();
    let mut checked = 0;
    for (cipher, prefix, rounds) in [
        ("GIFT-64", "GIFT64", 28),
        ("GIFT-128", "GIFT128", 40),
        ("GIFTb-128", "GIFT128", 40),
    ] {
        for n in 1..=3 {
            let t = read_trace(&format!("{prefix}_test_vector_{n}.txt"));
            assert_eq!(t.rounds.len(), rounds);
            let last = &t.rounds[rounds - 1][2];
            assert_eq!(last, &t.ciphertext, "the trace's last round is its ciphertext");
            // The traces print states in the original convention's byte order: each is a
            // gift.json vector.
            let listed = v["vectors"].as_array().unwrap().iter().any(|x| {
                x["cipher"] == cipher.replace("GIFTb", "GIFT")
                    && x["convention"] == "original"
                    && hex(x["key"].as_str().unwrap()) == t.key
                    && hex(x["plaintext"].as_str().unwrap()) == t.plaintext
                    && hex(x["ciphertext"].as_str().unwrap()) == t.ciphertext
            });
            assert!(listed, "{cipher} trace {n} is not among the gift.json vectors");
            let t = if cipher == "GIFTb-128" { t.giftb() } else { t };

            // The key schedule (shared by every strategy) against the "updated Key" lines.
            let mut key: [u8; 16] = t.key.clone().try_into().unwrap();
            for (r, round) in t.rounds.iter().enumerate() {
                key = gift::next_key(&key);
                assert_eq!(key.to_vec(), round[3], "{cipher} trace {n} round {r} updated key");
            }

            for s in strategies(cipher) {
                let i = s.info();
                let k = s.schedule(&t.key);
                assert_eq!(
                    encrypt1(&*k, &t.plaintext),
                    t.ciphertext,
                    "{cipher} {} trace {n}",
                    i.strategy
                );
                // Inputs and expected outputs of each function in each round.
                let before = |r: usize| {
                    if r == 0 {
                        t.plaintext.clone()
                    } else {
                        t.rounds[r - 1][2].clone()
                    }
                };
                let io = |f: Func, r: usize| match f {
                    Func::SubCells => (before(r), t.rounds[r][0].clone()),
                    Func::PermBits => (t.rounds[r][0].clone(), t.rounds[r][1].clone()),
                    _ => (t.rounds[r][1].clone(), t.rounds[r][2].clone()),
                };
                for &f in k.functions() {
                    for r in 0..rounds {
                        let (x, y) = io(f, r);
                        // Slot 1 of a batch gets another block: a different round's input for
                        // the key-independent functions, for AddRoundKey another round's
                        // input with this round's (published) key difference applied.
                        let other = (r + 7) % rounds;
                        let (x2, y2) = match f {
                            Func::AddRoundKey => {
                                let (x2, _) = io(f, other);
                                let y2: Vec<u8> = x2.iter().zip(&x).zip(&y).map(|((a, b), c)| a ^ b ^ c).collect();
                                (x2, y2)
                            }
                            _ => io(f, other),
                        };
                        let mut input = x.repeat(i.batch);
                        let mut expect = y.repeat(i.batch);
                        if i.batch > 1 {
                            let bs = i.block_bytes;
                            input[bs..2 * bs].copy_from_slice(&x2);
                            expect[bs..2 * bs].copy_from_slice(&y2);
                        }
                        let got = apply(&*k, f, r, &input);
                        assert_eq!(got, expect, "{cipher} {} trace {n} round {r} {}", i.strategy, f.name());
                        checked += 1;
                    }
                }
            }
        }
    }
    println!("{checked} (strategy, function, round) trace steps checked");
}

/// xorshift64: the tests' reproducible randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

const PAIRS: usize = 10_000;

#[test]
fn strategies_match_naive() {
    for cipher in ["GIFT-64", "GIFT-128", "GIFTb-128"] {
        let reference = naive(cipher);
        let bs = reference.info().block_bytes;
        let mut rk = reference.schedule(&[0; 16]);
        for s in strategies(cipher).into_iter().filter(|s| s.info().strategy != "naive") {
            let i = s.info();
            let mut rng = Rng(0x0123_4567_89ab_cdef);
            let mut k = s.schedule(&[0; 16]);
            for pair in 0..PAIRS {
                let key = rng.bytes(16);
                rk.rekey(&key);
                k.rekey(&key);
                let block = rng.bytes(bs);
                assert_eq!(
                    encrypt1(&*k, &block),
                    encrypt1(&*rk, &block),
                    "{cipher} {} pair {pair}",
                    i.strategy
                );
                // Every 50th key: distinct blocks, a full batch and a batch plus three.
                if pair % 50 == 0 {
                    for n in [i.batch, i.batch + 3] {
                        let blocks = rng.bytes(n * bs);
                        let mut got = blocks.clone();
                        k.encrypt(&mut got);
                        let mut want = blocks;
                        rk.encrypt(&mut want);
                        assert_eq!(got, want, "{cipher} {} pair {pair} x{n}", i.strategy);
                    }
                }
            }
            println!("{cipher} {}: {PAIRS} random pairs match naive", i.strategy);
        }
    }
}

/// CTR as the contract defines it, from single-block naive encryptions.
fn naive_ctr(k: &dyn Keyed, iv: &[u8], data: &mut [u8]) {
    let mut counter = iv.to_vec();
    for chunk in data.chunks_mut(iv.len()) {
        let ks = encrypt1(k, &counter);
        chunk.iter_mut().zip(&ks).for_each(|(d, s)| *d ^= s);
        increment_be(&mut counter);
    }
}

#[test]
fn ctr_matches_naive() {
    for cipher in ["GIFT-64", "GIFT-128", "GIFTb-128"] {
        let reference = naive(cipher);
        let bs = reference.info().block_bytes;
        for s in strategies(cipher) {
            let mut rng = Rng(0xfeed_f00d_1234_5678);
            for trial in 0..40 {
                let key = rng.bytes(16);
                let (k, rk) = (s.schedule(&key), reference.schedule(&key));
                let mut iv = rng.bytes(bs);
                if trial % 4 == 0 {
                    // Near the wrap of the whole-block counter.
                    iv.iter_mut().skip(1).for_each(|b| *b = 0xff);
                }
                let len = (rng.next() % (200 * bs as u64)) as usize;
                let data = rng.bytes(len);
                let mut got = data.clone();
                k.ctr(&iv, &mut got);
                let mut want = data;
                naive_ctr(&*rk, &iv, &mut want);
                assert_eq!(got, want, "{cipher} {} ctr trial {trial} len {len}", s.info().strategy);
            }
        }
    }
}

/// The `gift-cipher` crate (0.1) implements GIFT-128 only, in the original convention: it
/// matches the `original` rows of gift.json and neither the `giftb` nor the
/// `little-endian` ones (checked first, below).
#[test]
fn naive_matches_gift_cipher_crate() {
    use gift_cipher::cipher::{Array, BlockCipherEncrypt, KeyInit};
    let crate_encrypt = |key: &[u8], block: &[u8]| {
        let c = gift_cipher::Gift128::new(&Array::try_from(key).unwrap());
        let mut b = Array::try_from(block).unwrap();
        c.encrypt_block(&mut b);
        b.to_vec()
    };
    let v = vectors();
    for vec in v["vectors"].as_array().unwrap() {
        if vec["cipher"] != "GIFT-128" {
            continue;
        }
        let (key, pt, ct) = (
            hex(vec["key"].as_str().unwrap()),
            hex(vec["plaintext"].as_str().unwrap()),
            hex(vec["ciphertext"].as_str().unwrap()),
        );
        let matches = crate_encrypt(&key, &pt) == ct;
        assert_eq!(
            matches,
            vec["convention"] == "original",
            "gift-cipher convention on {vec}"
        );
    }
    let k = naive("GIFT-128");
    let mut rng = Rng(0x5eed);
    for _ in 0..PAIRS {
        let key = rng.bytes(16);
        let block = rng.bytes(16);
        assert_eq!(encrypt1(&*k.schedule(&key), &block), crate_encrypt(&key, &block));
    }
}
