//! Keccak-256 as submitted to the second round of the SHA-3 competition (Keccak
//! specifications version 2): the sponge Keccak[r=1088, c=512] over Keccak-f[1600] with
//! 24 rounds, and the padding of Keccak versions 1 and 2 (dropped in round 3): the message
//! is completed to whole bytes with a 1 bit and zeros (pad(M, 8)), followed by the
//! diversifier byte d = 32 (the output length in bytes) and the byte r/8 = 136, then by a
//! 1 bit and zeros up to a whole number of blocks (pad10*, no final 1 bit). Written from
//! "The Keccak reference, version 2"; the round-2 KAT files confirm d = 32. Bit-level
//! messages are supported (the NIST API's partial last byte is taken as its top bits,
//! which Keccak reads least significant first).

/// Rate in bytes (1088 bits).
const RATE: usize = 136;
/// The diversifier byte d of the round-2 padding: the output length in bytes.
const DIVERSIFIER: u8 = 32;

/// Round constants of the iota step, from the LFSR x^8 + x^6 + x^5 + x^4 + 1
/// (Keccak reference, section 1.2).
const RC: [u64; 24] = round_constants();
/// The rho and pi steps as one walk over the lanes: starting from lane (1, 0), the lane
/// at step t, (x, y), moves to (y, 2x + 3y) rotated by (t+1)(t+2)/2 mod 64 (Keccak
/// reference, section 1.2). `WALK[t]` is that destination (index x + 5y), `ROT[t]` the
/// rotation.
const WALK: [usize; 24] = rho_pi().0;
const ROT: [u32; 24] = rho_pi().1;

const fn rho_pi() -> ([usize; 24], [u32; 24]) {
    let mut walk = [0usize; 24];
    let mut rot = [0u32; 24];
    let (mut x, mut y) = (1usize, 0usize);
    let mut t = 0;
    while t < 24 {
        rot[t] = (((t + 1) * (t + 2) / 2) % 64) as u32;
        let nx = y;
        y = (2 * x + 3 * y) % 5;
        x = nx;
        walk[t] = x + 5 * y;
        t += 1;
    }
    (walk, rot)
}

const fn round_constants() -> [u64; 24] {
    let mut rc = [0u64; 24];
    let mut lfsr: u8 = 1;
    let mut i = 0;
    while i < 24 {
        let mut j = 0;
        while j < 7 {
            if lfsr & 1 != 0 {
                rc[i] |= 1u64 << ((1u32 << j) - 1);
            }
            lfsr = if lfsr & 0x80 != 0 {
                (lfsr << 1) ^ 0x71
            } else {
                lfsr << 1
            };
            j += 1;
        }
        i += 1;
    }
    rc
}

/// Keccak-f[1600].
fn keccak_f(a: &mut [u64; 25]) {
    for rc in RC {
        // theta
        let c: [u64; 5] = core::array::from_fn(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]);
        for x in 0..5 {
            let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
            for y in 0..5 {
                a[x + 5 * y] ^= d;
            }
        }
        // rho and pi
        let mut moving = a[1];
        macro_rules! walk {
            ($($t:literal)*) => {$(
                let here = a[WALK[$t]];
                a[WALK[$t]] = moving.rotate_left(ROT[$t]);
                moving = here;
            )*};
        }
        walk!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23);
        let _ = moving;
        // chi
        for y in 0..5 {
            let row: [u64; 5] = core::array::from_fn(|x| a[x + 5 * y]);
            for x in 0..5 {
                a[x + 5 * y] = row[x] ^ (!row[(x + 1) % 5] & row[(x + 2) % 5]);
            }
        }
        // iota
        a[0] ^= rc;
    }
}

struct Keccak256;

/// The catalogue entry for Keccak-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(Keccak256))
}

impl crate::Candidate for Keccak256 {
    fn name(&self) -> &'static str {
        "Keccak-256-r2"
    }
    fn label(&self) -> &'static str {
        "Keccak-256 round 2 (Keccak[r=1088,c=512], 24 rounds, round-2 padding with d=32)"
    }
    fn kat_dir(&self) -> &'static str {
        "keccak"
    }
    fn block_bytes(&self) -> usize {
        RATE
    }
    fn start(&self) -> Box<dyn crate::State> {
        Box::new(State {
            a: [0; 25],
            buf: [0; RATE],
            len: 0,
            done: false,
        })
    }
}

#[derive(Clone)]
struct State {
    a: [u64; 25],
    buf: [u8; RATE],
    len: usize,
    done: bool,
}

fn absorb(a: &mut [u64; 25], block: &[u8]) {
    for (lane, c) in a.iter_mut().zip(block.chunks_exact(8)) {
        *lane ^= u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
    keccak_f(a);
}

impl State {
    /// Appends one byte to the queue, absorbing a full block.
    fn push(&mut self, byte: u8) {
        self.buf[self.len] = byte;
        self.len += 1;
        if self.len == RATE {
            absorb(&mut self.a, &self.buf);
            self.len = 0;
        }
    }

    /// The round-2 padding: `last` holds the message's final `bits` (0..=7) bits in its
    /// low positions; a 1 bit completes that byte (pad(M, 8)), then d, r/8, and 10*.
    fn pad(&mut self, last: u8, bits: u32) {
        self.push((last & ((1u8 << bits) - 1)) | (1u8 << bits));
        self.push(DIVERSIFIER);
        self.push(RATE as u8);
        let len = self.len;
        self.buf[len..].fill(0);
        self.buf[len] |= 0x01;
        absorb(&mut self.a, &self.buf);
        self.len = 0;
        self.done = true;
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (RATE - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < RATE {
                return;
            }
            absorb(&mut self.a, &self.buf);
            self.len = 0;
        }
        let mut blocks = data.chunks_exact(RATE);
        for block in &mut blocks {
            absorb(&mut self.a, block);
        }
        let rest = blocks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        self.pad(last >> (8 - bits), bits);
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if !self.done {
            self.pad(0, 0);
        }
        for (o, lane) in out.chunks_exact_mut(8).zip(self.a.iter()) {
            o.copy_from_slice(&lane.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
