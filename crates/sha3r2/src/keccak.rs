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
/// The rho offsets of lane `x + 5y` (Keccak reference, section 1.2): starting from lane
/// (1, 0) at t = 0, lane (x, y) at step t is rotated by (t+1)(t+2)/2 mod 64 and the walk
/// moves to (y, 2x + 3y); lane (0, 0) is not rotated.
const RHO: [u32; 25] = {
    let mut rho = [0u32; 25];
    let (mut x, mut y) = (1usize, 0usize);
    let mut t = 0;
    while t < 24 {
        rho[x + 5 * y] = (((t + 1) * (t + 2) / 2) % 64) as u32;
        let nx = y;
        y = (2 * x + 3 * y) % 5;
        x = nx;
        t += 1;
    }
    rho
};

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

/// One round of Keccak-f[1600], every lane index a constant (the macros below expand
/// the 25 lanes by name), so the compiler keeps the state in registers as far as they go
/// and needs no loop over lanes.
#[inline(always)]
fn round(a: &mut [u64; 25], rc: u64) {
    // theta: column parities, then each lane XORed with its D[x].
    let c: [u64; 5] = [
        a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20],
        a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21],
        a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22],
        a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23],
        a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24],
    ];
    let d: [u64; 5] = [
        c[4] ^ c[1].rotate_left(1),
        c[0] ^ c[2].rotate_left(1),
        c[1] ^ c[3].rotate_left(1),
        c[2] ^ c[4].rotate_left(1),
        c[3] ^ c[0].rotate_left(1),
    ];
    // rho and pi: lane (x, y), with D[x] added, rotated into position (y, 2x + 3y).
    let mut b = [0u64; 25];
    macro_rules! rho_pi {
        ($y:literal: $($x:literal)*) => {$(
            b[$y + 5 * ((2 * $x + 3 * $y) % 5)] = (a[$x + 5 * $y] ^ d[$x]).rotate_left(RHO[$x + 5 * $y]);
        )*};
    }
    rho_pi!(0: 0 1 2 3 4);
    rho_pi!(1: 0 1 2 3 4);
    rho_pi!(2: 0 1 2 3 4);
    rho_pi!(3: 0 1 2 3 4);
    rho_pi!(4: 0 1 2 3 4);
    // chi along each row (one `andn` per lane where the CPU has BMI1), then iota.
    macro_rules! chi {
        ($y:literal: $($x:literal)*) => {$(
            a[$x + 5 * $y] = b[$x + 5 * $y] ^ (!b[($x + 1) % 5 + 5 * $y] & b[($x + 2) % 5 + 5 * $y]);
        )*};
    }
    chi!(0: 0 1 2 3 4);
    chi!(1: 0 1 2 3 4);
    chi!(2: 0 1 2 3 4);
    chi!(3: 0 1 2 3 4);
    chi!(4: 0 1 2 3 4);
    a[0] ^= rc;
}

/// Keccak-f[1600]: 24 rounds.
#[inline(always)]
fn permute(a: &mut [u64; 25]) {
    for rc in RC {
        round(a, rc);
    }
}

/// Keccak-f[1600] compiled with BMI1 and BMI2: chi's `!b & c` becomes one `andn` and the
/// rotations `rorx`, which writes a fresh register instead of rotating in place.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2")]
fn permute_bmi(a: &mut [u64; 25]) {
    permute(a)
}

/// Whether the CPU has BMI1 and BMI2 (the detection macro caches its answer).
#[cfg(target_arch = "x86_64")]
fn has_bmi() -> bool {
    std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2")
}

/// Keccak-f[1600], with the BMI build where the CPU has it.
fn keccak_f(a: &mut [u64; 25]) {
    #[cfg(target_arch = "x86_64")]
    if has_bmi() {
        // SAFETY: BMI1 and BMI2 were detected just above, the only features enabled.
        unsafe { permute_bmi(a) };
        return;
    }
    permute(a)
}

/// The implementation this CPU runs, reported as the subject's implementation.
fn path_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if has_bmi() {
        return "bmi";
    }
    "portable"
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
    fn path(&self) -> &'static str {
        path_name()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The rho offsets against the table of the Keccak reference (section 1.2), row by row.
    #[test]
    fn rho_offsets_match_the_reference_table() {
        assert_eq!(
            RHO,
            [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]
        );
    }

    /// The BMI build and the plain one agree on pseudo-random states.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn bmi_matches_portable() {
        if !has_bmi() {
            cryptoscope_testkit::skip("this CPU has no BMI1/BMI2");
            return;
        }
        let mut next = crate::testutil::rng(0x6b65_6363_616b);
        for _ in 0..100 {
            let mut a: [u64; 25] = core::array::from_fn(|_| next());
            let mut b = a;
            permute(&mut a);
            // SAFETY: BMI1 and BMI2 were detected above.
            unsafe { permute_bmi(&mut b) };
            assert_eq!(a, b);
        }
    }
}
