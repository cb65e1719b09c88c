//! `fixsliced`: one block in general-purpose registers, constant time. GIFT-128 in four
//! 32-bit slices, GIFT-64 in four 16-bit slices, both fixsliced (see [`super::slices`]):
//! the bitsliced S-box, then only cheap per-slice rotations/SWAPMOVEs instead of the bit
//! permutation. There is no PermBits on its own: the exposed functions are SubCells and
//! AddRoundKey on the packed slices in the standard (unmoved) frame. GIFTb-128 blocks are
//! the slices themselves, so that variant skips the packing.

use super::slices::{self, Kernel, Keys128, Keys64, Sliced128, Sliced64};
use super::{Convention, Strat};
use crate::{Func, Strategy};

const ABOUT128: &str = "fixsliced (Adomnicai-Najm-Peyrin): 4 x 32-bit slices in GPRs, bitsliced S-box, per-round slice rotations/SWAPMOVEs in 5-round frame cycles; no standalone PermBits";
const ABOUT64: &str = "fixsliced: 4 x 16-bit slices in GPRs, bitsliced S-box, per-round nibble/halfword rotations in 4-round frame cycles; no standalone PermBits";

pub(super) fn strategies() -> Vec<Box<dyn Strategy>> {
    vec![
        Strat::<Sliced64<Scalar>>::boxed(Convention::Original, "fixsliced", false, &[], ABOUT64),
        Strat::<Sliced128<Scalar, false>>::boxed(Convention::Original, "fixsliced", false, &[], ABOUT128),
        Strat::<Sliced128<Scalar, true>>::boxed(Convention::GiftB, "fixsliced", false, &[], ABOUT128),
    ]
}

/// The scalar kernels: `u32` slices for GIFT-128, `u16` for GIFT-64, one block.
pub(super) struct Scalar;

impl Kernel for Scalar {
    const BATCH_128: usize = 1;
    const BATCH_64: usize = 1;

    unsafe fn encrypt128(block: &mut [u8], keys: &Keys128, giftb: bool) {
        slices::encrypt128_block(block, keys, giftb)
    }

    unsafe fn encrypt64(block: &mut [u8], keys: &Keys64) {
        slices::encrypt64::<u16>(block, keys)
    }

    unsafe fn load(block: &[u8], state: &mut [u8], gift64: bool, giftb: bool) {
        if gift64 {
            slices::load_state::<u16>(block, state, false)
        } else {
            slices::load_state::<u32>(block, state, giftb)
        }
    }

    unsafe fn store(state: &[u8], block: &mut [u8], gift64: bool, giftb: bool) {
        if gift64 {
            slices::store_state::<u16>(state, block, false)
        } else {
            slices::store_state::<u32>(state, block, giftb)
        }
    }

    unsafe fn call(f: Func, state: &mut [u8], k: &[u32; 3], gift64: bool) {
        if gift64 {
            slices::call_bytes::<u16>(f, state, k, true)
        } else {
            slices::call_bytes::<u32>(f, state, k, false)
        }
    }
}
