//! The application drivers' sections of the HTML report: Tahoe-LAFS, the constant-time
//! audit, TLS and the tunnels.

use super::*;

/// The Tahoe-LAFS study: set-up facts, the table, and the client's time hashing per file
/// set and direction as bars, one per hash.
pub(crate) fn tahoe_section(ri: usize, run: &RunFile) -> String {
    let (header, rows) = crate::tahoe::rows(&run.applications);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>Tahoe-LAFS: time spent hashing in uploads and downloads</h3><ul>");
    for l in crate::tahoe::setup_lines(&run.applications) {
        let _ = write!(s, "<li>{}</li>", esc(&l));
    }
    s.push_str("</ul><p>Hashing is the wall time inside the hash's update and digest calls in the client process (every tagged hash of Tahoe-LAFS goes through one patch point); the share is that time over the total time of the requests. Servers: the storage nodes and introducer together.</p>");
    s.push_str(&plain_table(&header, &rows));
    let items: Vec<_> = crate::tahoe::measured(&run.applications).collect();
    let mut groups: Vec<(String, String)> = Vec::new();
    for m in items.iter().filter(|m| !m.literal) {
        let g = (m.vector.clone(), m.direction.clone());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for (gi, (vector, direction)) in groups.iter().enumerate() {
        let bars: Vec<Bar> = items
            .iter()
            .filter(|m| m.vector == *vector && m.direction == *direction)
            .enumerate()
            .filter_map(|(i, m)| {
                let ms = m.client_hash_s * 1e3;
                (ms > 0.0).then(|| Bar::new(m.hash.clone(), ms, None, PALETTE[i % PALETTE.len()]))
            })
            .collect();
        if !bars.is_empty() {
            let title = format!("{vector} {direction}: client time hashing");
            s.push_str(&bar_chart(&format!("tahoe-{ri}-{gi}"), &title, "ms", &bars));
        }
    }
    s
}

/// The constant-time audit: the table, its legend and every finding.
pub(crate) fn ct_section(run: &RunFile) -> String {
    let (header, rows, notes) = crate::ct::rows(&run.applications, true);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>Constant-time audit</h3>");
    let _ = write!(s, "<p>{}</p>", esc(crate::ct::LEGEND));
    s.push_str(&plain_table(&header, &rows));
    if !notes.is_empty() {
        s.push_str("<h4>Findings</h4><ul>");
        for n in notes {
            let _ = write!(s, "<li>{}</li>", esc(&n));
        }
        s.push_str("</ul>");
    }
    s
}

/// TLS handshakes: set-up facts, the configurations table, the soft/accelerated ratios and
/// handshakes per second as bars.
pub(crate) fn tls_section(ri: usize, run: &RunFile) -> String {
    let (header, rows) = crate::tls::rows(&run.applications);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>TLS handshakes</h3><ul>");
    for l in crate::tls::setup_lines(&run.applications) {
        let _ = write!(s, "<li>{}</li>", esc(&l));
    }
    s.push_str("</ul>");
    s.push_str(&plain_table(&header, &rows));
    let (ch, cr) = crate::tls::conditions_rows(&run.applications);
    if !cr.is_empty() {
        s.push_str("<h4>Under network conditions</h4>");
        s.push_str(&plain_table(&ch, &cr));
        let confs: Vec<_> = crate::tls::configurations(&run.applications).collect();
        s.push_str(&super::latency::latency_charts(ri, &confs));
    }
    let (rh, rr) = crate::tls::ratio_rows(&run.applications);
    if !rr.is_empty() {
        s.push_str("<h4>Software versus accelerated</h4>");
        s.push_str(&plain_table(&rh, &rr));
    }
    let bars: Vec<Bar> = crate::tls::configurations(&run.applications)
        .filter(|c| c.status == "ok")
        .enumerate()
        .filter_map(|(i, c)| {
            let hs = c.measurement.as_ref()?.handshakes_per_s?;
            let name = format!(
                "{} {} {}",
                c.group,
                c.cert.as_deref().unwrap_or("?"),
                c.accel.as_deref().unwrap_or("")
            );
            Some(Bar::new(name, hs, None, PALETTE[i % PALETTE.len()]))
        })
        .collect();
    if !bars.is_empty() {
        s.push_str(&bar_chart(&format!("tls-{ri}"), "handshakes per second", "hs/s", &bars));
    }
    s
}

/// Tunnels: set-up facts, the table, soft/accelerated ratios and throughput as bars.
pub(crate) fn tunnel_section(ri: usize, run: &RunFile) -> String {
    let (header, rows) = crate::tunnel::rows(&run.applications);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>Tunnels: latency, throughput and CPU</h3><ul>");
    for l in crate::tunnel::setup_lines(&run.applications) {
        let _ = write!(s, "<li>{}</li>", esc(&l));
    }
    s.push_str("</ul>");
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    s.push_str(&plain_table(&h, &rows));
    let (rh, rr) = crate::tunnel::ratio_rows(&run.applications);
    if !rr.is_empty() {
        s.push_str("<h4>Software versus accelerated</h4>");
        s.push_str(&plain_table(&rh, &rr));
    }
    let (hh, hr) = crate::tunnel::hostile_rows(&run.applications);
    if !hr.is_empty() {
        s.push_str("<h4>Under hostile traffic</h4><p>The same measurements while a third party sent the server junk datagrams, unfinished handshakes and dropped, stalled or garbage TCP connections; &times; compares with the calm measurement of the same configuration.</p>");
        s.push_str(&plain_table(&hh, &hr));
    }
    let bars: Vec<Bar> = crate::tunnel::configurations(&run.applications)
        .filter(|r| r.status == cryptoscope_model::apps::tunnel::Status::Ok)
        .enumerate()
        .filter_map(|(i, r)| {
            // A throughput that could not be measured (stored as null) has no bar.
            let v = r.transfer.as_ref().map(|t| t.mb_per_s).filter(|v| !v.is_nan())?;
            Some(Bar::new(r.key(), v, None, PALETTE[i % PALETTE.len()]))
        })
        .collect();
    if !bars.is_empty() {
        s.push_str(&bar_chart(
            &format!("tunnel-{ri}"),
            "bulk transfer throughput",
            "MB/s",
            &bars,
        ));
    }
    s
}

/// The OpenVPN server study (`cryptoscope openvpn-server`): set-up, table and a bar of
/// connections a minute per cell.
pub(crate) fn openvpn_section(ri: usize, run: &RunFile) -> String {
    let (header, rows) = crate::openvpn::rows(&run.applications);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>OpenVPN server: connections</h3><ul>");
    for l in crate::openvpn::setup_lines(&run.applications) {
        let _ = write!(s, "<li>{}</li>", esc(&l));
    }
    s.push_str("</ul>");
    s.push_str(&plain_table(&header, &rows));
    let bars: Vec<Bar> = crate::openvpn::cells(&run.applications)
        .filter(|r| r.status == cryptoscope_model::apps::openvpn::Status::Ok && r.per_minute.is_finite())
        .enumerate()
        .map(|(i, r)| Bar::new(r.item(), r.per_minute, None, PALETTE[i % PALETTE.len()]))
        .collect();
    if !bars.is_empty() {
        s.push_str(&bar_chart(
            &format!("openvpn-{ri}"),
            "connections completed a minute",
            "connections/min",
            &bars,
        ));
    }
    s
}

/// An A/B comparison (`cryptoscope ab`): what was compared and the table.
pub(crate) fn ab_section(_ri: usize, run: &RunFile) -> String {
    let (header, rows) = crate::ab::rows(&run.applications);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h3>A/B comparison</h3><ul>");
    for l in crate::ab::setup_lines(&run.applications) {
        let _ = write!(s, "<li>{}</li>", esc(&l));
    }
    s.push_str("</ul>");
    s.push_str(&plain_table(&header, &rows));
    s
}
