//! CubeHash16/32-256 as submitted to the second round of the SHA-3 competition
//! (D. J. Bernstein, "CubeHash specification (2.B.1)", round-2 tweak): a 1024-bit state of
//! 32 words, 32-byte message blocks each followed by 16 rounds, 10r = 160 initial rounds
//! and 10r = 160 final rounds. Bit-level messages are supported (the padding appends a 1
//! bit right after the message).

/// Rounds per block (r).
const R: usize = 16;
/// Bytes per block (b).
const B: usize = 32;
/// Output bits (h).
const H: u32 = 256;

/// One CubeHash round over the 32 words x[ijklm] (index bits i=16, j=8, k=4, l=2, m=1):
/// the ten steps of the specification, the swaps folded into the indexing. `lo` holds
/// x[0jklm], `hi` x[1jklm].
#[inline(always)]
fn round(lo: &mut [u32; 16], hi: &mut [u32; 16]) {
    // 1: x[1jklm] += x[0jklm]; 2, 3, 4: rotate x[0jklm] by 7, swap j, xor x[1jklm] in.
    let h1: [u32; 16] = core::array::from_fn(|i| hi[i].wrapping_add(lo[i]));
    let l1: [u32; 16] = core::array::from_fn(|i| lo[i ^ 8].rotate_left(7) ^ h1[i]);
    // 5: swap l in x[1jklm]; 6: add x[0jklm].
    let h2: [u32; 16] = core::array::from_fn(|i| h1[i ^ 2].wrapping_add(l1[i]));
    // 7, 8, 9: rotate x[0jklm] by 11, swap k, xor x[1jklm] in; 10: swap m in x[1jklm].
    *lo = core::array::from_fn(|i| l1[i ^ 4].rotate_left(11) ^ h2[i]);
    *hi = core::array::from_fn(|i| h2[i ^ 1]);
}

fn rounds(x: &mut [u32; 32], n: usize) {
    let (l, h) = x.split_at_mut(16);
    let mut lo: [u32; 16] = l.try_into().expect("16 words");
    let mut hi: [u32; 16] = h.try_into().expect("16 words");
    for _ in 0..n {
        round(&mut lo, &mut hi);
    }
    l.copy_from_slice(&lo);
    h.copy_from_slice(&hi);
}

fn absorb(x: &mut [u32; 32], block: &[u8]) {
    for (w, c) in x.iter_mut().zip(block.chunks_exact(4)) {
        *w ^= u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    rounds(x, R);
}

struct CubeHash;

/// The catalogue entry for CubeHash16/32-256 round 2.
pub fn candidate() -> Option<Box<dyn crate::Candidate>> {
    Some(Box::new(CubeHash))
}

impl crate::Candidate for CubeHash {
    fn name(&self) -> &'static str {
        "CubeHash-256-r2"
    }
    fn label(&self) -> &'static str {
        "CubeHash16/32-256 round 2 (160 initial and 160 final rounds)"
    }
    fn kat_dir(&self) -> &'static str {
        "cubehash"
    }
    fn block_bytes(&self) -> usize {
        B
    }
    fn start(&self) -> Box<dyn crate::State> {
        let mut x = [0u32; 32];
        x[0] = H / 8;
        x[1] = B as u32;
        x[2] = R as u32;
        rounds(&mut x, 10 * R);
        Box::new(State {
            x,
            buf: [0; B],
            len: 0,
            done: false,
        })
    }
}

#[derive(Clone)]
struct State {
    x: [u32; 32],
    buf: [u8; B],
    len: usize,
    /// The padding is already in (after `update_bits`).
    done: bool,
}

impl State {
    /// Appends the byte `last` (message bits, then the padding 1 bit) and zeros, absorbs.
    fn pad(&mut self, last: u8) {
        let len = self.len;
        self.buf[len] = last;
        self.buf[len + 1..].fill(0);
        let block = self.buf;
        absorb(&mut self.x, &block);
        self.len = 0;
        self.done = true;
    }
}

impl crate::State for State {
    fn update(&mut self, mut data: &[u8]) {
        if self.len > 0 {
            let take = (B - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < B {
                return;
            }
            let block = self.buf;
            absorb(&mut self.x, &block);
            self.len = 0;
        }
        let mut blocks = data.chunks_exact(B);
        for block in &mut blocks {
            absorb(&mut self.x, block);
        }
        let rest = blocks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    fn update_bits(&mut self, last: u8, bits: u32) -> Result<(), crate::BitsUnsupported> {
        if !(1..=7).contains(&bits) {
            return Err(crate::BitsUnsupported);
        }
        self.pad((last & (0xFFu8 << (8 - bits))) | (0x80 >> bits));
        Ok(())
    }

    fn finish(mut self: Box<Self>, out: &mut [u8; 32]) {
        if !self.done {
            self.pad(0x80);
        }
        self.x[31] ^= 1;
        rounds(&mut self.x, 10 * R);
        for (o, w) in out.chunks_exact_mut(4).zip(self.x.iter()) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }

    fn copy(&self) -> Box<dyn crate::State> {
        Box::new(self.clone())
    }
}
