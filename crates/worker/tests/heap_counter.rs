//! The heap-counting preload library against allocations whose sizes we choose: this test
//! runs itself again as a child process with the library in LD_PRELOAD.
use cryptoscope_worker::memory::{HeapCounter, HEAP_PRELOAD};

const CHILD: &str = "CRYPTOSCOPE_HEAP_COUNTER_CHILD";

#[test]
fn counts_exactly_what_is_allocated_inside_the_window() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libcryptoscope-heap.so");
    std::fs::write(&lib, HEAP_PRELOAD).unwrap();
    let o = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "counts_exactly_what_is_allocated_inside_the_window",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("LD_PRELOAD", &lib)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    let line = out
        .lines()
        .find_map(|l| l.find("STATS ").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("{out}"));
    // malloc(1000), calloc(3, 8), free, realloc(24 -> 100), posix_memalign(64, 4096), two
    // frees; plus a block allocated before the window and freed inside it (not counted).
    assert_eq!(
        line,
        "STATS allocations=4 frees=4 requested=5220 peak=4196 retained=0 untracked=0"
    );
}

fn child() {
    let h = HeapCounter::find().expect("the preload library is loaded");
    // black_box keeps the compiler from removing allocations whose blocks are never used.
    use std::hint::black_box as bb;
    // SAFETY: plain libc allocation calls on pointers they return.
    unsafe {
        let before = bb(libc::malloc(bb(777)));
        h.begin();
        let p = bb(libc::malloc(bb(1000)));
        let q = bb(libc::calloc(bb(3), 8));
        libc::free(bb(p));
        libc::free(bb(before));
        let r = bb(libc::realloc(q, bb(100)));
        let mut m = std::ptr::null_mut();
        assert_eq!(libc::posix_memalign(&mut m, 64, 4096), 0);
        libc::free(bb(m));
        libc::free(bb(r));
        let s = h.end();
        println!(
            "STATS allocations={} frees={} requested={} peak={} retained={} untracked={}",
            s.allocations, s.frees, s.bytes_requested, s.peak_live, s.live_at_end, s.untracked
        );
    }
}
