//! The byte-sliced Camellia core shared by the x86 vector strategies, written once as a
//! macro and instantiated per vector width.
//!
//! `BATCH = 16 * LANES` blocks are held in sixteen vectors, `s[j]` holding byte `j` (of
//! `D1 || D2`) of every block: vector lane `l`, byte `p` is block `16 * l + p`. Everything
//! but the S-boxes is then plain vector XOR/AND/OR on whole vectors: the subkeys are
//! broadcast bytes, the P-function is sixteen XORs of the eight S-box outputs, FL's 32-bit
//! rotation is a byte shift with carries from the neighbouring vector.
//!
//! The invoking module defines, for its vector type `V` (each `#[target_feature]`,
//! `#[inline]`): `LANES`, `FEATURES` (as in [`crate::Info::features`]), `xor`, `and`, `or`,
//! `unpacklo8`, `unpackhi8`, `shl1` (each byte doubled), `msb` (each byte's top bit moved
//! to bit 0), `xor3`, `splat`, `first_byte`, `load_row` (vector `r` from blocks `r`,
//! `r + 16`, ...), `store_row`, `load_vec`/`store_vec` (16 * LANES raw bytes),
//! `sbox::<S, DEC>` (SBOX`S+1` on every byte; for the AES-instruction S-boxes it also
//! reorders the lanes, by ShiftRows if `!DEC`, by InvShiftRows if `DEC`) and
//! `permute_d2`/`unpermute_d2` (`D2`'s lane order in the state, the ShiftRows order that
//! makes the even rounds' `sbox::<S, false>` and odd rounds' `sbox::<S, true>` outputs
//! line up with the half they are XORed into; identities if `sbox` keeps lanes), and
//! invokes `byte_sliced!("feature,list")`.

/// Generates the byte-sliced core and its [`crate::Keyed`] implementation `Keys`.
macro_rules! byte_sliced {
    ($features:literal) => {
        /// Blocks per batch.
        const BATCH: usize = 16 * LANES;
        /// Bytes per vector.
        const VBYTES: usize = 16 * LANES;

        /// Byte-sliced state: `s[j]` holds byte `j` of every block.
        type State = [V; 16];

        /// Subkeys, each byte broadcast to a whole vector.
        struct RoundKeys {
            /// kw1 || kw2, XORed into `D1 || D2` first.
            pre: [V; 16],
            /// kw3 || kw4, XORed into `D2 || D1` last.
            post: [V; 16],
            k: [[V; 8]; 24],
            ke: [[V; 8]; 6],
        }

        /// The eight bytes of `x`, most significant first, broadcast.
        #[target_feature(enable = $features)]
        fn splat_u64(x: u64) -> [V; 8] {
            let b = x.to_be_bytes();
            let mut v = [splat(0); 8];
            for j in 0..8 {
                v[j] = splat(b[j]);
            }
            v
        }

        impl RoundKeys {
            #[target_feature(enable = $features)]
            fn set(&mut self, sk: &super::Subkeys) {
                self.pre[..8].copy_from_slice(&splat_u64(sk.kw[0]));
                self.pre[8..].copy_from_slice(&splat_u64(sk.kw[1]));
                self.post[..8].copy_from_slice(&splat_u64(sk.kw[2]));
                self.post[8..].copy_from_slice(&splat_u64(sk.kw[3]));
                for (v, &k) in self.k.iter_mut().zip(&sk.k) {
                    *v = splat_u64(k);
                }
                for (v, &k) in self.ke.iter_mut().zip(&sk.ke) {
                    *v = splat_u64(k);
                }
            }
        }

        /// 16×16 byte transpose within each 128-bit lane, its own inverse: each of the four
        /// interleaving passes rotates the 8-bit index (vector, byte) left by one bit.
        #[target_feature(enable = $features)]
        fn transpose(s: &mut State) {
            *s = interleave(&interleave(&interleave(&interleave(s))));
        }

        /// One pass of [`transpose`].
        #[target_feature(enable = $features)]
        fn interleave(t: &State) -> State {
            [
                unpacklo8(t[0], t[8]),
                unpackhi8(t[0], t[8]),
                unpacklo8(t[1], t[9]),
                unpackhi8(t[1], t[9]),
                unpacklo8(t[2], t[10]),
                unpackhi8(t[2], t[10]),
                unpacklo8(t[3], t[11]),
                unpackhi8(t[3], t[11]),
                unpacklo8(t[4], t[12]),
                unpackhi8(t[4], t[12]),
                unpacklo8(t[5], t[13]),
                unpackhi8(t[5], t[13]),
                unpacklo8(t[6], t[14]),
                unpackhi8(t[6], t[14]),
                unpacklo8(t[7], t[15]),
                unpackhi8(t[7], t[15]),
            ]
        }

        /// One Feistel round: `s[8 - SRC..] ^= F(s[SRC..], k)`; `SRC = 0, DEC = false`
        /// (`D2 ^= F(D1)`, even rounds) or `SRC = 8, DEC = true` (`D1 ^= F(D2)`, odd).
        #[target_feature(enable = $features)]
        fn feistel<const SRC: usize, const DEC: bool>(s: &mut State, k: &[V; 8]) {
            let dst = 8 - SRC;
            // S-function: t1..t8 use SBOX1, 2, 3, 4, 2, 3, 4, 1.
            let t0 = sbox::<0, DEC>(xor(s[SRC], k[0]));
            let t1 = sbox::<1, DEC>(xor(s[SRC + 1], k[1]));
            let t2 = sbox::<2, DEC>(xor(s[SRC + 2], k[2]));
            let t3 = sbox::<3, DEC>(xor(s[SRC + 3], k[3]));
            let t4 = sbox::<1, DEC>(xor(s[SRC + 4], k[4]));
            let t5 = sbox::<2, DEC>(xor(s[SRC + 5], k[5]));
            let t6 = sbox::<3, DEC>(xor(s[SRC + 6], k[6]));
            let t7 = sbox::<0, DEC>(xor(s[SRC + 7], k[7]));
            // P-function in 16 XORs (the aN name which t's they hold; yN as in RFC 3713).
            let a05 = xor(t0, t5);
            let a16 = xor(t1, t6);
            let a27 = xor(t2, t7);
            let a34 = xor(t3, t4);
            let a247 = xor(t4, a27);
            let a345 = xor(t5, a34);
            let a056 = xor(t6, a05);
            let a167 = xor(t7, a16);
            let y5 = xor(a05, a167);
            let y6 = xor(a16, a247);
            let y7 = xor(a27, a345);
            let y8 = xor(a34, a056);
            // y1..y4 are y8 ^ a247, y5 ^ a345, y6 ^ a056, y7 ^ a167.
            s[dst] = xor3(s[dst], y8, a247);
            s[dst + 1] = xor3(s[dst + 1], y5, a345);
            s[dst + 2] = xor3(s[dst + 2], y6, a056);
            s[dst + 3] = xor3(s[dst + 3], y7, a167);
            s[dst + 4] = xor(s[dst + 4], y5);
            s[dst + 5] = xor(s[dst + 5], y6);
            s[dst + 6] = xor(s[dst + 6], y7);
            s[dst + 7] = xor(s[dst + 7], y8);
        }

        /// `(x1 & k1) <<< 1` on a 32-bit word held as four byte vectors, most significant first.
        #[target_feature(enable = $features)]
        fn and_rotl1(x: &[V], k: &[V]) -> [V; 4] {
            let t = [and(x[0], k[0]), and(x[1], k[1]), and(x[2], k[2]), and(x[3], k[3])];
            let mut r = t;
            for j in 0..4 {
                r[j] = or(shl1(t[j]), msb(t[(j + 1) % 4]));
            }
            r
        }

        /// The FL layer: `D1 = FL(D1, ke1)`, `D2 = FL⁻¹(D2, ke2)`.
        #[target_feature(enable = $features)]
        fn fl_layer(s: &mut State, ke1: &[V; 8], ke2: &[V; 8]) {
            let r = and_rotl1(&s[0..4], &ke1[0..4]);
            for j in 0..4 {
                s[4 + j] = xor(s[4 + j], r[j]);
                s[j] = xor(s[j], or(s[4 + j], ke1[4 + j]));
            }
            for j in 0..4 {
                s[8 + j] = xor(s[8 + j], or(s[12 + j], ke2[4 + j]));
            }
            let r = and_rotl1(&s[8..12], &ke2[0..4]);
            for j in 0..4 {
                s[12 + j] = xor(s[12 + j], r[j]);
            }
        }

        /// The whole cipher on a byte-sliced state.
        #[target_feature(enable = $features)]
        fn encrypt_state(keys: &RoundKeys, rounds: usize, s: &mut State) {
            for j in 0..16 {
                s[j] = xor(s[j], keys.pre[j]);
            }
            let mut r = 0;
            loop {
                for i in 0..3 {
                    feistel::<0, false>(s, &keys.k[r + 2 * i]);
                    feistel::<8, true>(s, &keys.k[r + 2 * i + 1]);
                }
                r += 6;
                if r == rounds {
                    break;
                }
                let l = r / 6 - 1;
                fl_layer(s, &keys.ke[2 * l], &keys.ke[2 * l + 1]);
            }
            for j in 0..8 {
                let c1 = unpermute_d2(xor(s[8 + j], keys.post[j]));
                let c2 = xor(s[j], keys.post[8 + j]);
                s[j] = c1;
                s[8 + j] = c2;
            }
        }

        /// Blocks (`BATCH * 16` bytes) to the byte-sliced state.
        #[target_feature(enable = $features)]
        fn load_blocks(blocks: &[u8]) -> State {
            let mut s = [splat(0); 16];
            for (r, v) in s.iter_mut().enumerate() {
                *v = load_row(blocks, r);
            }
            transpose(&mut s);
            for v in &mut s[8..] {
                *v = permute_d2(*v);
            }
            s
        }

        /// Byte-sliced vectors in natural lane order back to blocks.
        #[target_feature(enable = $features)]
        fn untranspose(mut s: State, blocks: &mut [u8]) {
            transpose(&mut s);
            for (r, v) in s.iter().enumerate() {
                store_row(*v, blocks, r);
            }
        }

        /// The byte-sliced state back to blocks.
        #[target_feature(enable = $features)]
        fn store_blocks(mut s: State, blocks: &mut [u8]) {
            for v in &mut s[8..] {
                *v = unpermute_d2(*v);
            }
            untranspose(s, blocks);
        }

        /// Encrypts one batch of blocks in place.
        #[target_feature(enable = $features)]
        fn encrypt_batch(keys: &RoundKeys, rounds: usize, blocks: &mut [u8]) {
            let mut s = load_blocks(blocks);
            encrypt_state(keys, rounds, &mut s);
            untranspose(s, blocks);
        }

        /// CTR mode (the counter block as a big-endian integer, wrapping): counter blocks
        /// are written a batch at a time, encrypted and XORed into the data.
        #[target_feature(enable = $features)]
        fn ctr_blocks(keys: &RoundKeys, rounds: usize, iv: &[u8], data: &mut [u8]) {
            let mut counter = u128::from_be_bytes(iv.try_into().expect("16-byte iv"));
            let mut ks = [0u8; BATCH * 16];
            for chunk in data.chunks_mut(BATCH * 16) {
                for block in ks.chunks_exact_mut(16) {
                    block.copy_from_slice(&counter.to_be_bytes());
                    counter = counter.wrapping_add(1);
                }
                encrypt_batch(keys, rounds, &mut ks);
                for (d, k) in chunk.iter_mut().zip(&ks) {
                    *d ^= k;
                }
            }
        }

        /// Encrypts whole blocks; a last partial batch is padded to a full one (constant
        /// time: the same work whatever the data).
        #[target_feature(enable = $features)]
        fn encrypt_blocks(keys: &RoundKeys, rounds: usize, blocks: &mut [u8]) {
            let mut chunks = blocks.chunks_exact_mut(BATCH * 16);
            for chunk in &mut chunks {
                encrypt_batch(keys, rounds, chunk);
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                let mut buf = [0u8; BATCH * 16];
                buf[..rest.len()].copy_from_slice(rest);
                encrypt_batch(keys, rounds, &mut buf);
                rest.copy_from_slice(&buf[..rest.len()]);
            }
        }

        /// F(x, k) for the key schedule, computed on broadcast bytes by the byte-sliced
        /// round (no secret-indexed tables there either).
        #[target_feature(enable = $features)]
        fn f_scalar(x: u64, k: u64) -> u64 {
            let mut s = [splat(0); 16];
            s[..8].copy_from_slice(&splat_u64(x));
            feistel::<0, false>(&mut s, &splat_u64(k));
            let mut y = [0u8; 8];
            for j in 0..8 {
                y[j] = first_byte(s[8 + j]);
            }
            u64::from_be_bytes(y)
        }

        /// Reads a state laid out as in [`crate::Keyed::load`].
        #[target_feature(enable = $features)]
        fn read_state(state: &[u8]) -> State {
            let mut s = [splat(0); 16];
            for (v, bytes) in s.iter_mut().zip(state.chunks_exact(VBYTES)) {
                *v = load_vec(bytes);
            }
            s
        }

        #[target_feature(enable = $features)]
        fn write_state(s: &State, state: &mut [u8]) {
            for (v, bytes) in s.iter().zip(state.chunks_exact_mut(VBYTES)) {
                store_vec(*v, bytes);
            }
        }

        /// The strategy of one key size.
        pub(crate) struct Strat {
            info: crate::Info,
            size: super::Size,
        }

        impl Strat {
            pub(crate) fn new(size: super::Size) -> Self {
                Strat {
                    info: super::info(size, LABEL, BATCH, false, FEATURES, ABOUT),
                    size,
                }
            }
        }

        impl crate::Strategy for Strat {
            fn info(&self) -> &crate::Info {
                &self.info
            }

            fn available(&self) -> bool {
                crate::cpu_has_all(self.info.features)
            }

            fn schedule(&self, key: &[u8]) -> Box<dyn crate::Keyed> {
                assert!(
                    self.available(),
                    "{} {} needs {:?}",
                    self.info.cipher,
                    LABEL,
                    FEATURES
                );
                // SAFETY: all-zero bytes are a valid value of every vector type; the keys
                // are overwritten by `rekey` before use.
                let keys: RoundKeys = unsafe { std::mem::zeroed() };
                let mut k = Box::new(Keys {
                    size: self.size,
                    keys,
                });
                crate::Keyed::rekey(&mut *k, key);
                k
            }
        }

        /// Expanded, broadcast subkeys. Only made by [`Strat::schedule`], after checking
        /// the CPU features, which is what makes the calls below sound.
        struct Keys {
            size: super::Size,
            keys: RoundKeys,
        }

        impl crate::Keyed for Keys {
            fn rekey(&mut self, key: &[u8]) {
                let mut sk = super::Subkeys::default();
                // SAFETY (here and below): `Keys` exists only if the CPU has `FEATURES`.
                super::key_schedule(self.size, key, |x, k| unsafe { f_scalar(x, k) }, &mut sk);
                unsafe { self.keys.set(&sk) };
            }

            fn encrypt(&self, blocks: &mut [u8]) {
                assert_eq!(blocks.len() % 16, 0, "whole blocks only");
                // SAFETY: as in `rekey`.
                unsafe { encrypt_blocks(&self.keys, self.size.rounds(), blocks) };
            }

            fn ctr(&self, iv: &[u8], data: &mut [u8]) {
                // SAFETY: as in `rekey`.
                unsafe { ctr_blocks(&self.keys, self.size.rounds(), iv, data) };
            }

            fn functions(&self) -> &'static [crate::Func] {
                &[crate::Func::Feistel, crate::Func::Fl]
            }

            fn state_bytes(&self) -> usize {
                16 * VBYTES
            }

            fn load(&self, blocks: &[u8], state: &mut [u8]) {
                assert!(blocks.len() >= BATCH * 16 && state.len() >= 16 * VBYTES);
                // SAFETY: as in `rekey`.
                unsafe { write_state(&load_blocks(blocks), state) };
            }

            fn store(&self, state: &[u8], blocks: &mut [u8]) {
                assert!(blocks.len() >= BATCH * 16 && state.len() >= 16 * VBYTES);
                // SAFETY: as in `rekey`.
                unsafe { store_blocks(read_state(state), blocks) };
            }

            fn call(&self, func: crate::Func, state: &mut [u8], round: usize) {
                self.size.check_call(func, round);
                assert!(state.len() >= 16 * VBYTES);
                // SAFETY: as in `rekey`.
                unsafe {
                    let mut s = read_state(state);
                    match func {
                        crate::Func::Feistel if round.is_multiple_of(2) => {
                            feistel::<0, false>(&mut s, &self.keys.k[round])
                        }
                        crate::Func::Feistel => feistel::<8, true>(&mut s, &self.keys.k[round]),
                        _ => fl_layer(&mut s, &self.keys.ke[2 * round], &self.keys.ke[2 * round + 1]),
                    }
                    write_state(&s, state);
                }
            }
        }
    };
}

pub(super) use byte_sliced;
