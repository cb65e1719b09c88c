//! 4-bit S-boxes evaluated bit-sliced from their algebraic normal form (Luffa's SubCrumb,
//! Hamsi's S-box): each output bit is the XOR of the monomials (ANDs of input bits) its
//! ANF contains. The ANF is computed at compile time from the S-box table by the Möbius
//! transform, so an implementation only states the table from its specification, and the
//! same evaluation serves scalar words and vector registers.

/// The ANF of a 4-bit S-box: bit `m` of entry `j` says whether output bit `j` contains the
/// monomial `x_i` for every bit `i` set in `m` (`m = 0`: the constant 1). Input and output
/// bit `i` are the `i`-th word of a slice.
pub(crate) const fn anf(sbox: &[u8; 16]) -> [u16; 4] {
    let mut out = [0u16; 4];
    let mut j = 0;
    while j < 4 {
        let mut t = [0u8; 16];
        let mut x = 0;
        while x < 16 {
            t[x] = (sbox[x] >> j) & 1;
            x += 1;
        }
        let mut i = 0;
        while i < 4 {
            let mut m = 0;
            while m < 16 {
                if m & (1 << i) != 0 {
                    t[m] ^= t[m ^ (1 << i)];
                }
                m += 1;
            }
            i += 1;
        }
        let mut m = 0;
        while m < 16 {
            out[j] |= (t[m] as u16) << m;
            m += 1;
        }
        j += 1;
    }
    out
}

/// The S-box whose ANF is `anf` on the bit columns of four words (`x[i]` holds input bit
/// `i`) of any type with AND and XOR; `ones` is the all-one word and `zero` the all-zero
/// one. With `anf` a constant the compiler keeps only the monomials that occur.
#[inline(always)]
pub(crate) fn eval<T>(x: [T; 4], anf: &[u16; 4], ones: T, zero: T) -> [T; 4]
where
    T: Copy + core::ops::BitAnd<Output = T> + core::ops::BitXor<Output = T>,
{
    let mut mono = [ones; 16];
    for m in 1..16usize {
        mono[m] = mono[m & (m - 1)] & x[m.trailing_zeros() as usize];
    }
    let mut y = [zero; 4];
    for (j, yj) in y.iter_mut().enumerate() {
        for (m, &w) in mono.iter().enumerate() {
            if anf[j] >> m & 1 == 1 {
                *yj = *yj ^ w;
            }
        }
    }
    y
}

#[cfg(test)]
mod tests {
    /// Evaluating the ANF on all sixteen inputs at once (bit `x` of word `i` is bit `i`
    /// of the input `x`) gives back the table.
    #[test]
    fn anf_evaluation_reproduces_the_table() {
        let table: [u8; 16] = [13, 14, 0, 1, 5, 10, 7, 6, 11, 3, 9, 12, 15, 8, 2, 4];
        let cols: [u16; 4] = core::array::from_fn(|i| (0..16).fold(0, |w, x| w | (((x >> i) & 1) << x)));
        let y = super::eval(cols, &super::anf(&table), u16::MAX, 0);
        for (x, &want) in table.iter().enumerate() {
            let got = (0..4).fold(0u8, |v, j| v | ((((y[j] >> x) & 1) as u8) << j));
            assert_eq!(got, want, "input {x}");
        }
    }
}
