//! What makes the report explorable: the toggles at the top (a box per provider and per
//! family present, which hide or show their marks and table rows across the page), sortable
//! and filterable tables, and the one hand-written script behind both (`explore.js`,
//! inlined; no library, nothing fetched). Without the script the page reads the same, all
//! shown, in the order written.

use super::marks::Of;
use super::{esc, provider_colour};
use crate::RunFile;
use std::fmt::Write as _;

/// The script, inlined at the end of the page.
pub(crate) const SCRIPT: &str = include_str!("explore.js");

/// The style of the toggles, tables, details and the new charts' parts.
pub(crate) const STYLE: &str = ".hidden,.filtered{display:none}\
.toggles{position:sticky;top:0;background:#fff;padding:4px 0;border-bottom:1px solid #ddd;z-index:1;font-size:13px}\
.toggles fieldset{display:inline-block;border:0;margin:0 18px 0 0;padding:0}.toggles legend{float:left;font-weight:bold;margin-right:6px}\
.toggles label{margin-right:10px;white-space:nowrap}.toggles i{display:inline-block;width:10px;height:10px;margin:0 4px}\
table.sortable th{cursor:pointer;user-select:none}th[aria-sort=ascending]::after{content:\" \\25B2\"}\
th[aria-sort=descending]::after{content:\" \\25BC\"}input.filter{display:block;margin:8px 0 4px;font-size:12px;width:260px}\
details summary{cursor:pointer;color:#1b6ca8}svg.hist path{fill:#1b6ca8}svg.spark .fast{stroke:#2e933c;stroke-dasharray:3,2}\
svg .pointlabel,svg .endlabel{font-size:10px}svg .level{font-size:8px;font-weight:bold;fill:#fff;text-anchor:middle;pointer-events:none}svg .unit{font-size:11px}.stability{font-style:italic}";

/// Display names of the families, in the order the toggles list them.
const FAMILIES: &[(&str, &str)] = &[
    ("kem", "KEM"),
    ("kex", "key exchange"),
    ("hash", "hash"),
    ("cipher", "block cipher"),
    ("aead", "AEAD"),
];

/// The toggles: a checked box per provider (with its colour) and per family found in the
/// runs' results; "" when they have none.
pub(crate) fn controls(runs: &[RunFile]) -> String {
    let rows = || runs.iter().flat_map(|r| r.results.iter());
    let mut providers: Vec<&str> = crate::PROVIDER_ORDER
        .iter()
        .copied()
        .filter(|p| rows().any(|r| r.provider == *p))
        .collect();
    for r in rows() {
        if !providers.contains(&r.provider.as_str()) {
            providers.push(&r.provider);
        }
    }
    let mut families: Vec<(&str, &str)> = FAMILIES
        .iter()
        .copied()
        .filter(|(f, _)| rows().any(|r| r.family == *f))
        .collect();
    for r in rows() {
        if !families.iter().any(|(f, _)| *f == r.family) {
            families.push((&r.family, &r.family));
        }
    }
    if providers.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<form class=\"toggles\" aria-label=\"show or hide providers and families\"><fieldset><legend>Providers</legend>",
    );
    for p in providers {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" data-toggle=\"provider\" value=\"{p}\" checked><i style=\"background:{}\"></i>{p}</label>",
            provider_colour(p),
            p = esc(p)
        );
    }
    s.push_str("</fieldset><fieldset><legend>Families</legend>");
    for (f, name) in families {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" data-toggle=\"family\" value=\"{}\" checked>{}</label>",
            esc(f),
            esc(name)
        );
    }
    s.push_str("</fieldset></form>");
    s
}

/// The filter box and a sortable table's start, up to its body (`id` may be empty: the
/// script then names the table by its place).
pub(crate) fn table_head(id: &str, class: &str, header: &[&str]) -> String {
    let mut s = String::from(
        "<input class=\"filter\" type=\"search\" placeholder=\"filter rows\" aria-label=\"filter the rows of the table below\">",
    );
    let id = if id.is_empty() {
        String::new()
    } else {
        format!(" id=\"{}\"", esc(id))
    };
    let _ = write!(s, "<table class=\"sortable {}\"{id}><thead><tr>", esc(class));
    for h in header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    s
}

/// A row's start tag, carrying its provider and family (none when both are empty).
pub(crate) fn row_start(of: &Of) -> String {
    if of.provider.is_empty() && of.family.is_empty() {
        "<tr>".into()
    } else {
        format!("<tr{}>", of.attrs())
    }
}

/// The end of a table `table_head` started.
pub(crate) const TABLE_END: &str = "</tbody></table>";

/// A sortable table of escaped text cells; each row carries the provider of its "provider"
/// column (when the header has one) and `family`.
pub(crate) fn sortable_table(id: &str, class: &str, header: &[&str], rows: &[Vec<String>], family: &str) -> String {
    let mut t = table_head(id, class, header);
    let pcol = header.iter().position(|h| *h == "provider");
    for r in rows {
        let of = Of {
            provider: pcol.and_then(|i| r.get(i)).cloned().unwrap_or_default(),
            family: family.to_string(),
        };
        t.push_str(&row_start(&of));
        for c in r {
            let _ = write!(t, "<td>{}</td>", esc(c));
        }
        t.push_str("</tr>");
    }
    t.push_str(TABLE_END);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::testrows::{row, run};

    #[test]
    fn toggles_list_what_the_runs_hold_in_display_order() {
        let r = run(vec![
            row("X25519", "kex", "openssl", "keypair", 1.0),
            row("ML-KEM-768", "kem", "liboqs", "keypair", 1.0),
        ]);
        let c = controls(&[r]);
        let (lib, ossl) = (
            c.find("value=\"liboqs\"").unwrap(),
            c.find("value=\"openssl\"").unwrap(),
        );
        assert!(lib < ossl, "providers in PROVIDER_ORDER");
        assert!(c.find(">KEM<").unwrap() < c.find(">key exchange<").unwrap());
        assert!(!c.contains("value=\"aws-lc\""), "only providers present");
        assert!(controls(&[]).is_empty());
    }

    #[test]
    fn a_sortable_table_has_a_filter_a_head_and_owned_rows() {
        let t = sortable_table(
            "t",
            "x",
            &["algorithm", "provider", "cycles"],
            &[vec!["X25519".into(), "openssl".into(), "1,000".into()]],
            "kex",
        );
        assert!(t.starts_with("<input class=\"filter\""));
        assert!(t.contains("<table class=\"sortable x\" id=\"t\"><thead><tr><th>algorithm</th>"));
        assert!(t.contains(r#"<tr data-provider="openssl" data-family="kex"><td>X25519</td>"#));
        assert!(t.ends_with(TABLE_END));
        assert!(!sortable_table("", "", &["a"], &[vec!["b".into()]], "").contains("<tr data-"));
    }

    #[test]
    fn the_script_is_small_and_offline() {
        assert!(SCRIPT.len() < 8 * 1024, "{} bytes", SCRIPT.len());
        for banned in ["http:", "https:", "fetch(", "XMLHttpRequest", "import "] {
            assert!(!SCRIPT.contains(banned), "{banned}");
        }
        assert!(!SCRIPT.contains("</script"), "the script cannot end its own element");
    }
}
