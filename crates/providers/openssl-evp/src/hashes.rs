//! OpenSSL's message digests (EVP_MD, `shim/base.c`) as streaming subjects. Copies are
//! `EVP_MD_CTX_copy_ex`; SHAKE is read with `EVP_DigestFinalXOF`.

use cryptoscope_catalogue::descriptor::{Descriptor, Randomness, Sizes};
use cryptoscope_catalogue::traits::{Hash, HashState, Subject};
use libc::c_void;
use std::ffi::CStr;

mod shim {
    use libc::c_void;
    use std::ffi::c_char;
    extern "C" {
        pub fn cs_md_new(name: *const c_char) -> *mut c_void;
        pub fn cs_md_update(ctx: *mut c_void, data: *const u8, len: usize) -> i32;
        pub fn cs_md_final(ctx: *mut c_void, out: *mut u8, len: usize) -> i32;
        pub fn cs_md_final_xof(ctx: *mut c_void, out: *mut u8, len: usize) -> i32;
        pub fn cs_md_copy(ctx: *const c_void) -> *mut c_void;
        pub fn cs_md_free(ctx: *mut c_void);
        pub fn cs_md_oneshot(name: *const c_char, data: *const u8, len: usize, out: *mut u8, out_len: usize) -> i32;
    }
}

/// How a digest is finished.
#[derive(Clone, Copy)]
enum Finish {
    Plain,
    /// SHA-256 of the SHA-256 digest.
    Double,
    Xof,
}

struct State {
    ctx: *mut c_void,
    finish: Finish,
}

// An EVP_MD_CTX is owned by this state alone and never shared between threads at once.
unsafe impl Send for State {}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: a live EVP_MD_CTX this state owns.
        unsafe { shim::cs_md_free(self.ctx) };
    }
}

impl HashState for State {
    fn update(&mut self, data: &[u8]) {
        // SAFETY: a live context; `data` is valid for its length.
        let ok = unsafe { shim::cs_md_update(self.ctx, data.as_ptr(), data.len()) };
        // OpenSSL fails an update only on memory exhaustion or a broken context.
        assert_eq!(ok, 1, "EVP_DigestUpdate failed");
    }
    fn finish(self: Box<Self>, out: &mut [u8]) {
        // SAFETY: a live context; `out` is valid for its length (the digest's size, which
        // cs_md_final checks).
        let ok = unsafe {
            match self.finish {
                Finish::Plain => shim::cs_md_final(self.ctx, out.as_mut_ptr(), out.len()),
                Finish::Double => {
                    let mut inner = [0u8; 32];
                    shim::cs_md_final(self.ctx, inner.as_mut_ptr(), 32)
                        & shim::cs_md_oneshot(c"SHA256".as_ptr(), inner.as_ptr(), 32, out.as_mut_ptr(), out.len())
                }
                Finish::Xof => shim::cs_md_final_xof(self.ctx, out.as_mut_ptr(), out.len()),
            }
        };
        assert_eq!(ok, 1, "EVP_DigestFinal failed");
    }
    fn copy(&self) -> Box<dyn HashState> {
        // SAFETY: a live context.
        let ctx = unsafe { shim::cs_md_copy(self.ctx) };
        assert!(!ctx.is_null(), "EVP_MD_CTX_copy_ex failed");
        Box::new(State {
            ctx,
            finish: self.finish,
        })
    }
}

struct Subj {
    desc: Descriptor,
    name: &'static CStr,
    finish: Finish,
}

fn start(name: &CStr) -> *mut c_void {
    // SAFETY: a NUL-terminated name.
    unsafe { shim::cs_md_new(name.as_ptr()) }
}

impl Hash for Subj {
    fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    fn start(&self) -> Box<dyn HashState> {
        let ctx = start(self.name);
        assert!(!ctx.is_null(), "EVP_DigestInit failed");
        Box::new(State {
            ctx,
            finish: self.finish,
        })
    }
}

/// Every catalogue hash this libcrypto offers (a digest it cannot fetch is left out).
pub fn subjects() -> Vec<Subject> {
    // By EVP name, as `openssl dgst` knows them.
    let list: [(&str, &CStr, Finish); 10] = [
        ("SHA-256", c"SHA256", Finish::Plain),
        ("SHA-256d", c"SHA256", Finish::Double),
        ("SHA-512", c"SHA512", Finish::Plain),
        ("SHA-512/256", c"SHA512-256", Finish::Plain),
        ("SHA3-256", c"SHA3-256", Finish::Plain),
        ("SHA3-512", c"SHA3-512", Finish::Plain),
        ("SHAKE128", c"SHAKE128", Finish::Xof),
        ("SHAKE256", c"SHAKE256", Finish::Xof),
        ("BLAKE2b-512", c"BLAKE2B512", Finish::Plain),
        ("BLAKE2s-256", c"BLAKE2S256", Finish::Plain),
    ];
    list.into_iter()
        .filter_map(|(alg, name, finish)| {
            let probe = start(name);
            if probe.is_null() {
                return None;
            }
            drop(State { ctx: probe, finish });
            let info = cryptoscope_catalogue::names::algorithm(alg).expect("catalogued hash");
            let desc = Descriptor::catalogued(
                alg,
                crate::provider(),
                "default",
                crate::version(),
                crate::build(),
                Sizes::digest(info.digest_size),
                Randomness::Internal,
            );
            Some(Subject::Hash(Box::new(Subj { desc, name, finish })))
        })
        .collect()
}
