//! Every event a worker wrote in the replay tier's recording (crates/engine/tests/fixtures/replay,
//! recorded from real workers: describe, gate, measured) reads as an
//! [`Event`] and is written back as the same JSON: the protocol's events are typed both ways.

use cryptoscope_model::events::Event;
use serde_json::Value;

const RECORDING: &str = include_str!("../../engine/tests/fixtures/replay/kem-hash.jsonl");

#[test]
fn recorded_events_read_and_write_back_unchanged() {
    let mut kinds = std::collections::BTreeSet::new();
    let mut n = 0;
    for line in RECORDING.lines().filter(|l| !l.trim().is_empty()) {
        let call: Value = serde_json::from_str(line).expect("a recorded call");
        for e in call["events"].as_array().expect("its events") {
            let typed: Event = serde_json::from_value(e.clone()).unwrap_or_else(|err| panic!("{err}: {e}"));
            assert_eq!(&serde_json::to_value(&typed).unwrap(), e, "written back as recorded");
            kinds.insert(e["type"].as_str().unwrap().to_string());
            n += 1;
        }
    }
    assert!(n > 20, "{n} events");
    for k in ["describe", "gate", "measured"] {
        assert!(kinds.contains(k), "the recording has `{k}` events: {kinds:?}");
    }
}
