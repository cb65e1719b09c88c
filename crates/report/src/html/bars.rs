//! Horizontal bar charts on a logarithmic axis: one bar per subject (or size, or figure),
//! with its 95% interval where there is one. Each bar, its label and its interval form one
//! mark (`<g class="mark">`) carrying the provider and family, so the page's toggles hide
//! them together.

use super::marks::{LogScale, Of};
use super::{esc, table};
use std::fmt::Write as _;

/// One bar: its label, value, optional 95% interval, colour, and whose it is.
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    pub label: String,
    pub value: f64,
    pub ci: Option<(f64, f64)>,
    pub colour: &'static str,
    pub of: Of,
}

impl Bar {
    /// A bar that belongs to no provider or family until `of` says.
    pub fn new(label: String, value: f64, ci: Option<(f64, f64)>, colour: &'static str) -> Bar {
        Bar {
            label,
            value,
            ci,
            colour,
            of: Of::default(),
        }
    }

    /// The same bar, belonging to `of`.
    pub fn of(self, of: Of) -> Bar {
        Bar { of, ..self }
    }
}

/// A horizontal bar chart: one bar per entry, log x axis in whole decades.
pub(crate) fn bar_chart(id: &str, title: &str, unit: &str, bars: &[Bar]) -> String {
    let row_h = 18.0;
    let label_w = 300.0;
    let plot_w = 520.0;
    let top = 28.0;
    let h = top + row_h * bars.len() as f64 + 30.0;
    let values = bars
        .iter()
        .flat_map(|b| [b.value, b.ci.map(|c| c.1).unwrap_or(b.value)]);
    let x = LogScale::of(values, label_w, label_w + plot_w);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" id="{id}" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}">"#,
        w = label_w + plot_w + 20.0,
        t = esc(title)
    );
    let _ = write!(
        s,
        r#"<text class="title" x="0" y="16">{} ({unit}, log scale)</text>"#,
        esc(title)
    );
    for d in x.ticks() {
        let xd = x.at(d);
        let _ = write!(
            s,
            r#"<line x1="{xd:.1}" y1="{top}" x2="{xd:.1}" y2="{y2:.1}" class="grid"/><text x="{xd:.1}" y="{ty:.1}" class="tick">{}</text>"#,
            // Decades below 1 (cycles per byte of fast ciphers) keep their digits.
            if d < 1.0 { format!("{d}") } else { table::group(d) },
            y2 = h - 24.0,
            ty = h - 10.0
        );
    }
    for (i, b) in bars.iter().enumerate() {
        let y = top + row_h * i as f64;
        let _ = write!(
            s,
            r#"<g class="mark"{}><text x="{lx:.1}" y="{ty:.1}" class="label">{}</text><rect class="bar" x="{label_w}" y="{by:.1}" width="{bw:.1}" height="{bh:.1}" fill="{}"><title>{}: {} {unit}</title></rect>"#,
            b.of.attrs(),
            esc(&b.label),
            b.colour,
            esc(&b.label),
            table::group(b.value),
            lx = label_w - 6.0,
            ty = y + 13.0,
            by = y + 3.0,
            bw = (x.at(b.value) - label_w).max(1.0),
            bh = row_h - 6.0
        );
        if let Some((a, c)) = b.ci {
            let _ = write!(
                s,
                r#"<line class="ci" x1="{:.1}" x2="{:.1}" y1="{cy:.1}" y2="{cy:.1}"/>"#,
                x.at(a),
                x.at(c),
                cy = y + row_h / 2.0
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_is_one_mark_with_its_interval_and_owner() {
        let of = Of {
            provider: "openssl".into(),
            family: "kex".into(),
        };
        let c = bar_chart(
            "x",
            "t",
            "ns",
            &[Bar::new("a".into(), 1000.0, Some((900.0, 1100.0)), "#000").of(of)],
        );
        assert!(c.contains("<rect class=\"bar\"") && c.contains("class=\"ci\""));
        assert!(c.contains(r#"<g class="mark" data-provider="openssl" data-family="kex">"#));
        assert_eq!(c.matches("<g ").count(), c.matches("</g>").count());
    }
}
