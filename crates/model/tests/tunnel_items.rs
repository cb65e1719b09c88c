//! Tunnel items as `cryptoscope tunnel` stores them (fixtures/README.md) read back as
//! `apps::tunnel` types with every figure, and are written back unchanged; so do items
//! shaped as earlier versions stored them.

use cryptoscope_model::apps::tunnel::{Row, Setup, Status, DRIVER};
use cryptoscope_model::apps::Item;
use cryptoscope_model::AppResult;
use serde_json::Value;

const FILE: &str = include_str!("fixtures/tunnel-7199fd5.json");

fn stored() -> Vec<AppResult> {
    serde_json::from_str(FILE).unwrap()
}

/// The configuration stored under `item`, read back.
fn row(apps: &[AppResult], item: &str) -> Row {
    let a = apps.iter().find(|a| a.item == item).unwrap();
    Row::from_app(a).unwrap_or_else(|| panic!("{item} reads"))
}

#[test]
fn every_stored_item_reads_and_is_written_back_unchanged() {
    for a in stored() {
        let back = if a.item == "setup" {
            Setup::from_app(&a).expect("the set-up reads").to_app("setup")
        } else {
            let r = Row::from_app(&a).unwrap_or_else(|| panic!("{} reads", a.item));
            assert_eq!(r.key(), a.item);
            r.to_app(r.key())
        };
        assert_eq!(back, a, "{}", a.item);
    }
}

#[test]
fn the_set_up_and_the_baseline_read_right() {
    let apps = stored();
    let s = Setup::from_app(&apps[0]).unwrap();
    assert_eq!(s.network, "veth between two namespaces, tbf 100mbit");
    assert_eq!((s.pings_per_size, s.transfer_bytes), (10, 8_388_608));
    assert_eq!(s.sizes, [64, 1400, 16000]);
    assert_eq!(s.mask, "~0x200000200000000");
    assert_eq!(
        (s.openvpn_tls_crypt, s.hostile, s.interrupted),
        (Some(true), Some(true), false)
    );
    // The set-up is no configuration.
    assert!(Row::from_app(&apps[0]).is_none());

    let b = row(&apps, "none - -");
    assert_eq!(
        (b.tunnel.as_str(), b.status, b.mask.as_deref()),
        ("none", Status::Ok, None)
    );
    let p = b.pings().unwrap();
    assert_eq!(p.keys().copied().collect::<Vec<_>>(), [64, 1400, 16000]);
    assert_eq!((p[&64].sent, p[&64].received, p[&64].p50_ms), (10, 10, 0.049));
    // No reply at 16000 bytes: the times were NaN, stored as null.
    assert_eq!(p[&16000].received, 0);
    assert!(p[&16000].p50_ms.is_nan() && p[&16000].max_ms.is_nan());
    let t = b.transfer.unwrap();
    assert_eq!(
        (t.bytes, t.bytes_sent, t.mb_per_s),
        (8_388_608.0, Some(8_388_608), 1342.17728)
    );
    // The baseline has no tunnel processes: no CPU, no overhead.
    assert_eq!(
        (t.cpu_a_pct, b.throughput_vs_plain, b.latency_vs_plain),
        (None, None, None)
    );
}

#[test]
fn measured_rows_read_right() {
    let apps = stored();
    let o = row(&apps, "openvpn-tls chacha20-poly1305 accel");
    assert_eq!(
        (o.mask.as_deref(), o.software.as_deref()),
        (Some(""), Some("OpenVPN 2.6.3"))
    );
    let t = o.transfer.as_ref().unwrap();
    assert_eq!(
        (t.sender_retransmits, t.cpu_a_pct, t.cpu_b_pct),
        (Some(14), Some(71.5), Some(60.25))
    );
    assert_eq!(o.throughput_vs_plain, Some(0.03112793));
    let l = o.latency_vs_plain.as_ref().unwrap();
    assert_eq!((l[&64], l[&1400]), (5.918367346938775, 6.0));
    assert!(l[&16000].is_nan());
    let h = o.hostile.as_ref().unwrap();
    assert!(h.served && h.why.is_none());
    let tr = h.traffic.as_ref().unwrap();
    assert_eq!(
        (tr.garbage_datagrams, tr.half_handshakes, tr.spoofed_datagrams),
        (2650, 330, 1320)
    );
    assert_eq!(
        tr.limits,
        "≤2000 datagrams/s, ≤40 connections/s, ≤6 held open for 3 s each"
    );
    assert_eq!((h.latency_vs_calm, h.throughput_vs_calm), (Some(1.25), Some(0.875)));
    assert_eq!(h.pings().unwrap()[&16000].received, 9);
    assert_eq!(h.transfer.as_ref().unwrap().sender_retransmits, Some(40));
    assert_eq!((h.new_handshake_s, h.new_login_s), (Some(0.412), None));

    // SSH carries no IP packets: its pings are stored as null, not left out.
    let s = row(&apps, "ssh aes-256-gcm soft");
    assert_eq!(s.ping, Some(None));
    assert!(s.pings().is_none() && s.latency_vs_plain.is_none());
    assert_eq!(
        s.ping_note.as_deref(),
        Some("SSH forwards TCP streams, not IP packets: no ping through it")
    );
    let h = s.hostile.as_ref().unwrap();
    assert_eq!(
        (h.ping.clone(), h.ping_loss, h.latency_vs_calm),
        (Some(None), None, None)
    );
    assert_eq!((h.new_login_s, h.new_login_attempts), (Some(1.375), Some(3)));
    let tr = h.traffic.as_ref().unwrap();
    assert_eq!(
        (tr.tcp_opened_and_dropped, tr.tcp_stalled_after_banner, tr.tcp_garbage),
        (40, 18, 35)
    );

    // Figures iperf3 did not give were stored as null.
    let w = row(&apps, "wireguard chacha20-poly1305 accel");
    let t = w.transfer.as_ref().unwrap();
    assert_eq!((t.bytes, t.bytes_sent, t.sender_retransmits), (0.0, None, None));
    assert!(t.seconds.is_nan() && t.mb_per_s.is_nan());
    assert!(t.cpu_a_pct.unwrap().is_nan() && w.throughput_vs_plain.unwrap().is_nan());
    // Not served: the measurement stopped at the pings.
    let h = w.hostile.as_ref().unwrap();
    assert!(!h.served);
    assert_eq!(
        (h.why.as_deref(), h.ping_loss),
        (Some("18 of 30 pings answered"), Some(0.4))
    );
    assert!(h.ping.is_none() && h.transfer.is_none() && h.throughput_vs_calm.is_none());
}

#[test]
fn rows_not_measured_keep_their_reason() {
    let apps = stored();
    let n = row(&apps, "wireguard chacha20-poly1305 soft");
    assert_eq!(n.status, Status::NotSupported);
    assert_eq!(
        n.reason.as_deref(),
        Some("wireguard-go's ChaCha20-Poly1305 uses no AES instructions: nothing to mask")
    );
    assert!(n.ping.is_none() && n.transfer.is_none() && n.mask.is_none());
    let f = row(&apps, "ipsec aes-256-gcm accel");
    assert_eq!(f.status, Status::Failed);
    assert_eq!(
        f.error.as_deref(),
        Some("IKE negotiation failed: [IKE] received NO_PROPOSAL_CHOSEN notify error")
    );
    // Another driver's item is no tunnel item.
    let other = AppResult {
        driver: "tls".into(),
        ..apps[7].clone()
    };
    assert!(Row::from_app(&other).is_none());
    assert_eq!(DRIVER, "tunnel");
}

/// Items as the versions before `--hostile` (7fb4623) and before the new session under
/// attack (3d80aca) stored them: without what those added. They read, and are written back
/// without it.
#[test]
fn items_of_earlier_versions_read_and_are_written_back_unchanged() {
    let mut apps = stored();
    for a in &mut apps {
        if let Some(h) = a.data.get_mut("hostile").and_then(Value::as_object_mut) {
            h.remove("new_handshake_s");
        }
    }
    let r = row(&apps, "openvpn-tls chacha20-poly1305 accel");
    assert!(r.hostile.as_ref().unwrap().new_handshake_s.is_none());
    for a in &mut apps {
        let m = a.data.as_object_mut().unwrap();
        for k in ["openvpn_tls_crypt", "hostile"] {
            m.remove(k);
        }
    }
    let s = Setup::from_app(&apps[0]).unwrap();
    assert_eq!((s.openvpn_tls_crypt, s.hostile), (None, None));
    for a in &apps[1..] {
        let r = Row::from_app(a).unwrap_or_else(|| panic!("{} reads", a.item));
        assert!(r.hostile.is_none());
        assert_eq!(r.to_app(r.key()), *a);
    }
    assert_eq!(s.to_app("setup"), apps[0]);
}
