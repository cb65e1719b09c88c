//! What the charts share: the provider and family every mark and table row carries as data
//! attributes (the page's toggles find them by those), logarithmic scales with their ticks
//! and labels, and the placing of text labels that must not overlap. Strings only, no I/O.

use super::esc;
use crate::{table, ResultRow};

/// The provider and family a chart mark or a table row belongs to. Empty where it belongs
/// to none (the sizes chart draws an algorithm's bytes, not a provider's): the toggles then
/// leave it alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Of {
    pub provider: String,
    pub family: String,
}

impl Of {
    /// The row's provider and family.
    pub fn row(r: &ResultRow) -> Of {
        Of {
            provider: r.provider.clone(),
            family: r.family.clone(),
        }
    }

    /// A family's, of no single provider.
    pub fn family(family: &str) -> Of {
        Of {
            provider: String::new(),
            family: family.to_string(),
        }
    }

    /// ` data-provider="…" data-family="…"`, to go inside an element's start tag.
    pub fn attrs(&self) -> String {
        format!(
            r#" data-provider="{}" data-family="{}""#,
            esc(&self.provider),
            esc(&self.family)
        )
    }
}

/// The whole decades around the positive `values` (one decade at least); (1, 10) when there
/// are none.
pub(crate) fn decade_bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    let (a, b) = (lo.log10().floor(), hi.log10().ceil());
    (10f64.powf(a), 10f64.powf(b.max(a + 1.0)))
}

/// A logarithmic scale from the value range `lo..hi` onto the pixel range `from..to`
/// (`to` may be below `from`: a y axis grows upwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LogScale {
    pub lo: f64,
    pub hi: f64,
    pub from: f64,
    pub to: f64,
}

impl LogScale {
    /// The scale over the whole decades around `values`.
    pub fn of(values: impl Iterator<Item = f64>, from: f64, to: f64) -> LogScale {
        let (lo, hi) = decade_bounds(values);
        LogScale { lo, hi, from, to }
    }

    /// The pixel position of `v` (values outside the range are clamped to it).
    pub fn at(&self, v: f64) -> f64 {
        let v = v.clamp(self.lo, self.hi);
        self.from + (self.to - self.from) * (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
    }

    /// The ticks: every decade, and 2× and 5× between them when the scale spans a single
    /// decade (too few labels to read a value otherwise).
    pub fn ticks(&self) -> Vec<f64> {
        let steps: &[f64] = if self.hi / self.lo <= 10.0 * 1.0001 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut out = Vec::new();
        let mut d = self.lo;
        while d <= self.hi * 1.0001 {
            for s in steps {
                let t = d * s;
                if t <= self.hi * 1.0001 {
                    out.push(t);
                }
            }
            d *= 10.0;
        }
        out
    }
}

/// Where a chart draws: its `width` × `height` box and the margins around the plot.
pub(crate) struct Frame {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

/// Log–log axes: a grid line and a labelled tick per tick of each scale (`y_label` writes
/// the y ticks), then the axis titles, `x_title` under the plot and `y_title` along its
/// left edge (both escaped here).
pub(crate) fn log_axes(
    s: &mut String,
    f: &Frame,
    (x, y): (&LogScale, &LogScale),
    y_label: fn(f64) -> String,
    (x_title, y_title): (&str, &str),
) {
    use std::fmt::Write as _;
    let (plot_right, plot_bottom) = (f.width - f.right, f.height - f.bottom);
    for t in x.ticks() {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{p:.1}" x2="{p:.1}" y1="{top}" y2="{plot_bottom}"/><text class="tick" x="{p:.1}" y="{ty}">{}</text>"#,
            tick_label(t),
            p = x.at(t),
            top = f.top,
            ty = plot_bottom + 13.0
        );
    }
    for t in y.ticks() {
        let _ = write!(
            s,
            r#"<line class="grid" x1="{left}" x2="{plot_right}" y1="{p:.1}" y2="{p:.1}"/><text class="tick" x="{lx}" y="{ty:.1}" text-anchor="end">{}</text>"#,
            y_label(t),
            p = y.at(t),
            left = f.left,
            lx = f.left - 6.0,
            ty = y.at(t) + 4.0
        );
    }
    let _ = write!(
        s,
        r#"<text class="unit" x="{cx}" y="{by}">{}</text><text class="unit" transform="translate(13 {cy}) rotate(-90)">{}</text>"#,
        esc(x_title),
        esc(y_title),
        cx = (f.left + plot_right) / 2.0,
        by = f.height - 10.0,
        cy = (f.top + plot_bottom) / 2.0
    );
}

/// A tick's label: digits grouped below ten thousand ("1,000"), k/M/G above ("10k",
/// "100M"), decimals below one ("0.01").
pub(crate) fn tick_label(v: f64) -> String {
    if v < 1.0 {
        return format!("{}", (v * 1e6).round() / 1e6);
    }
    for (unit, div) in [("G", 1e9), ("M", 1e6), ("k", 1e3)] {
        if v >= 10_000.0 && v >= div {
            let x = v / div;
            return if x.fract().abs() < 1e-9 {
                format!("{x:.0}{unit}")
            } else {
                format!("{x:.1}{unit}")
            };
        }
    }
    table::group(v)
}

/// A duration tick's label from nanoseconds: "100 ns", "10 µs", "1 ms", "2 s".
pub(crate) fn ns_label(ns: f64) -> String {
    let (x, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", (x * 1000.0).round() / 1000.0)
}

/// A placed label: where its anchor is, its baseline, and whether it ends there (placed
/// left of its point) rather than starts.
pub(crate) type Placed = (f64, f64, bool);

/// Where a label of `text` beside a point at `(x, y)` goes: right of the point (8 px off),
/// or left of it when `left` allows, on the point's line or up to `reach` lines above or
/// below, at the first place that overlaps nothing already `taken` (boxes: x from, x to,
/// baseline). `None` when every place is taken (the point keeps its tooltip). Records the
/// box taken. Text is assumed 6 px wide per character and 11 px high; `y` is the baseline.
pub(crate) fn place_label(
    taken: &mut Vec<(f64, f64, f64)>,
    (x, y): (f64, f64),
    text: &str,
    left: bool,
    reach: u8,
) -> Option<Placed> {
    let w = 6.0 * text.chars().count() as f64;
    let free = |x0: f64, yy: f64, t: &[(f64, f64, f64)]| {
        t.iter()
            .all(|&(a, b, ty)| (ty - yy).abs() >= 11.0 || b <= x0 || x0 + w <= a)
    };
    let sides: &[bool] = if left { &[false, true] } else { &[false] };
    for &end in sides {
        let dys = (0..=reach).flat_map(|i| [-11.0 * f64::from(i), 11.0 * f64::from(i)]);
        for dy in dys {
            let (x0, yy) = (if end { x - 8.0 - w } else { x + 8.0 }, y + dy);
            if free(x0, yy, taken) {
                taken.push((x0, x0 + w, yy));
                return Some((if end { x - 8.0 } else { x + 8.0 }, yy, end));
            }
        }
    }
    None
}

/// Baselines for labels wanted at `ys` (in any order) that keep each label's place in the
/// vertical order of `ys` and at least 11 px from the next, within `top..bottom` where
/// there is room: pushed down past their neighbours above, then up from the bottom.
pub(crate) fn stack_labels(ys: &[f64], top: f64, bottom: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..ys.len()).collect();
    order.sort_by(|a, b| ys[*a].total_cmp(&ys[*b]));
    let mut placed: Vec<f64> = order.iter().map(|i| ys[*i].max(top)).collect();
    for i in 1..placed.len() {
        placed[i] = placed[i].max(placed[i - 1] + 11.0);
    }
    let mut limit = bottom;
    for p in placed.iter_mut().rev() {
        *p = p.min(limit);
        limit = *p - 11.0;
    }
    let mut out = vec![0.0; ys.len()];
    for (k, i) in order.into_iter().enumerate() {
        out[i] = placed[k];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades_enclose_the_data() {
        assert_eq!(decade_bounds([150.0, 20_000.0].into_iter()), (100.0, 100_000.0));
        assert_eq!(decade_bounds([100.0].into_iter()), (100.0, 1000.0));
        assert_eq!(decade_bounds([0.0, -1.0, f64::NAN].into_iter()), (1.0, 10.0));
        assert_eq!(decade_bounds([0.3, 2.0].into_iter()), (0.1, 10.0));
    }

    #[test]
    fn log_scale_maps_decades_evenly() {
        let s = LogScale::of([64.0, 9000.0].into_iter(), 100.0, 400.0);
        assert_eq!((s.lo, s.hi), (10.0, 10_000.0));
        assert!((s.at(10.0) - 100.0).abs() < 1e-9);
        assert!((s.at(100.0) - 200.0).abs() < 1e-9);
        assert!((s.at(1000.0) - 300.0).abs() < 1e-9);
        assert!((s.at(10_000.0) - 400.0).abs() < 1e-9);
        // Clamped, and a y axis that grows upwards.
        assert!((s.at(1.0) - 100.0).abs() < 1e-9);
        let y = LogScale::of([2.0, 50.0].into_iter(), 300.0, 0.0);
        assert!((y.at(10.0) - 150.0).abs() < 1e-9);
    }

    #[test]
    fn ticks_are_decades_with_steps_in_a_single_decade() {
        let s = LogScale::of([150.0, 20_000.0].into_iter(), 0.0, 1.0);
        assert_eq!(s.ticks(), vec![100.0, 1000.0, 10_000.0, 100_000.0]);
        let one = LogScale::of([1200.0, 3000.0].into_iter(), 0.0, 1.0);
        assert_eq!(one.ticks(), vec![1000.0, 2000.0, 5000.0, 10_000.0]);
    }

    #[test]
    fn tick_labels_stay_short() {
        assert_eq!(tick_label(0.01), "0.01");
        assert_eq!(tick_label(100.0), "100");
        assert_eq!(tick_label(1000.0), "1,000");
        assert_eq!(tick_label(10_000.0), "10k");
        assert_eq!(tick_label(2_000_000.0), "2M");
        assert_eq!(tick_label(1e9), "1G");
        assert_eq!(ns_label(100.0), "100 ns");
        assert_eq!(ns_label(10_000.0), "10 µs");
        assert_eq!(ns_label(1e6), "1 ms");
    }

    #[test]
    fn labels_move_to_a_free_place_or_give_up() {
        let mut taken = Vec::new();
        assert_eq!(
            place_label(&mut taken, (10.0, 50.0), "ML-KEM-768", false, 3),
            Some((18.0, 50.0, false))
        );
        // Its neighbour, 2 px lower: a line up still clashes, a line down is free.
        assert_eq!(
            place_label(&mut taken, (20.0, 52.0), "Kyber768", false, 3),
            Some((28.0, 63.0, false))
        );
        // Far to the right: no clash.
        assert_eq!(
            place_label(&mut taken, (500.0, 50.0), "X25519", false, 3),
            Some((508.0, 50.0, false))
        );
        // Seven lines taken on the right: to the left, ending there.
        let mut full: Vec<(f64, f64, f64)> = (-3..=3).map(|i| (100.0, 300.0, 100.0 + 11.0 * i as f64)).collect();
        assert_eq!(
            place_label(&mut full, (100.0, 100.0), "P-256", true, 3),
            Some((92.0, 100.0, true))
        );
        let mut full: Vec<(f64, f64, f64)> = (-3..=3).map(|i| (0.0, 300.0, 100.0 + 11.0 * i as f64)).collect();
        assert_eq!(place_label(&mut full, (100.0, 100.0), "P-256", true, 3), None);
    }

    #[test]
    fn stacked_labels_keep_their_order_and_room() {
        assert_eq!(stack_labels(&[50.0, 10.0, 200.0], 0.0, 300.0), vec![50.0, 10.0, 200.0]);
        // Three ends at one place: one line apart, in the order given.
        assert_eq!(
            stack_labels(&[100.0, 100.0, 100.0], 0.0, 300.0),
            vec![100.0, 111.0, 122.0]
        );
        // At the bottom: moved up to fit.
        assert_eq!(stack_labels(&[295.0, 299.0], 0.0, 300.0), vec![289.0, 300.0]);
        assert!(stack_labels(&[], 0.0, 1.0).is_empty());
    }

    #[test]
    fn attributes_are_escaped() {
        let of = Of {
            provider: "a\"b".into(),
            family: "kem".into(),
        };
        assert_eq!(of.attrs(), r#" data-provider="a&quot;b" data-family="kem""#);
    }
}
