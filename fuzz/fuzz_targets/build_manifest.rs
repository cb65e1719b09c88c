//! Build manifests (`build.json` in each directory of the builds directory, written by
//! `cryptoscope build`/`add` and read back by `builds::list`), and the build line results
//! show for them.
#![no_main]

use cryptoscope_fuzz::{fresh_dir, put};
use cryptoscope_worker::builds::{self, Manifest, MANIFEST};
use libfuzzer_sys::fuzz_target;
use std::sync::Once;

fuzz_target!(|data: &[u8]| {
    static ENV: Once = Once::new();
    let dir = fresh_dir("builds");
    ENV.call_once(|| std::env::set_var("CRYPTOSCOPE_BUILDS", &dir));
    put(&format!("builds/b/{MANIFEST}"), data);
    let listed = builds::list();
    let direct = std::str::from_utf8(data)
        .ok()
        .and_then(|t| serde_json::from_str::<Manifest>(t).ok());
    // Listed exactly when it parses, as what it parses to.
    assert_eq!(listed.len(), usize::from(direct.is_some()));
    if let (Some((p, m)), Some(d)) = (listed.first(), &direct) {
        assert_eq!(m, d);
        assert!(p.ends_with("b"));
        let _ = m.build_line();
    }
});
