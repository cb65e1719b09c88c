//! Helpers of the unit tests that compare fast paths with portable ones.

/// One step of a xorshift64 generator: deterministic test inputs (`*s` must not be 0).
pub(crate) fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// The same generator as a closure, seeded with `seed` (made odd, so never 0).
pub(crate) fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || xorshift(&mut s)
}
