//! Reading callgrind's output format (valgrind's `callgrind.out.PID` files) into a call
//! graph: per function its self cost, its cost per source line, and the call arcs with
//! their counts and inclusive costs.
//!
//! The format is described in valgrind's manual ("Callgrind Format Specification"). This
//! reader handles what callgrind writes: header lines (`events:`, `positions:`,
//! `summary:`, `totals:`), name compression (`fn=(12) name` defines id 12, `fn=(12)`
//! refers to it; files, objects and functions have separate id spaces), position
//! compression (`+3`, `-2`, `*`), inlined-file switches (`fi=`/`fe=`), and call arcs
//! (`cob=`/`cfi=`/`cfn=`, `calls=COUNT TARGET`, then the arc's inclusive cost line).
//! Only the first event (normally `Ir`, instructions executed) is kept. Malformed input
//! is an error naming the line, never a panic.

use std::collections::{BTreeMap, HashMap};

/// One function (identified by object and name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Function {
    pub name: String,
    /// The shared object or executable it lives in.
    pub object: String,
    /// The source file named by the last `fl=` before its costs, if any.
    pub file: String,
    /// Cost of the function's own instructions.
    pub self_cost: u64,
    /// Self cost per (source file, line); line 0 means no line information.
    pub lines: BTreeMap<(String, u32), u64>,
}

/// A caller-to-callee arc, summed over every call site.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Arc {
    pub caller: usize,
    pub callee: usize,
    pub calls: u64,
    /// Inclusive cost of those calls.
    pub cost: u64,
}

/// A parsed profile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Event names from the `events:` header; the costs below are of the first.
    pub events: Vec<String>,
    pub functions: Vec<Function>,
    pub arcs: Vec<Arc>,
    /// The `summary:`/`totals:` figure if present, else the sum of self costs.
    pub total: u64,
}

/// A parse error with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "callgrind output line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Name tables for compressed names.
#[derive(Default)]
struct Names {
    map: HashMap<u64, String>,
}

impl Names {
    /// Resolves `(id) name`, `(id)` or a plain name.
    fn resolve(&mut self, v: &str) -> Result<String, String> {
        let v = v.trim();
        let Some(rest) = v.strip_prefix('(') else {
            return Ok(v.to_string());
        };
        // `(below main)` is a plain name that happens to start with a parenthesis.
        let Some(id) = rest
            .find(')')
            .filter(|&c| c > 0 && rest[..c].bytes().all(|b| b.is_ascii_digit()))
            .and_then(|c| rest[..c].parse::<u64>().ok())
        else {
            return Ok(v.to_string());
        };
        let close = rest.find(')').unwrap_or_default();
        let name = rest[close + 1..].trim();
        if name.is_empty() {
            self.map
                .get(&id)
                .cloned()
                .ok_or_else(|| format!("name id ({id}) used before it was defined"))
        } else {
            self.map.insert(id, name.to_string());
            Ok(name.to_string())
        }
    }
}

/// Parses one position or cost number with callgrind's compression relative to `prev`.
fn position(tok: &str, prev: u64) -> Result<u64, String> {
    let num = |s: &str| -> Result<u64, String> {
        if let Some(h) = s.strip_prefix("0x") {
            u64::from_str_radix(h, 16).map_err(|_| format!("bad number `{tok}`"))
        } else {
            s.parse::<u64>().map_err(|_| format!("bad number `{tok}`"))
        }
    };
    if tok == "*" {
        Ok(prev)
    } else if let Some(d) = tok.strip_prefix('+') {
        prev.checked_add(num(d)?)
            .ok_or_else(|| format!("position overflow at `{tok}`"))
    } else if let Some(d) = tok.strip_prefix('-') {
        prev.checked_sub(num(d)?)
            .ok_or_else(|| format!("negative position at `{tok}`"))
    } else {
        num(tok)
    }
}

struct Parser {
    profile: Profile,
    index: HashMap<(String, String), usize>,
    objects: Names,
    files: Names,
    fns: Names,
    positions: usize,
    /// Current object, file (fl=) and inline file (fi=/fe=), function.
    ob: String,
    fl: String,
    fi: Option<String>,
    current: Option<usize>,
    /// Pending call: callee object, callee name, count (the next cost line is its cost).
    cob: Option<String>,
    cfn: Option<String>,
    pending_call: Option<(usize, u64)>,
    last_pos: Vec<u64>,
    summary: Option<u64>,
    /// Every cost and call count so far, at most [`MAX_TOTAL`].
    sum: u64,
}

/// Largest total of costs and call counts one profile may have: 2^53 (callgrind counts
/// instructions; 2^53 is months of execution), so no sum over a profile can overflow, nor
/// one over up to 2,048 dumps merged into one.
const MAX_TOTAL: u64 = 1 << 53;

impl Parser {
    fn function(&mut self, object: &str, name: &str, file: &str) -> usize {
        if let Some(&i) = self.index.get(&(object.to_string(), name.to_string())) {
            return i;
        }
        let i = self.profile.functions.len();
        self.profile.functions.push(Function {
            name: name.to_string(),
            object: object.to_string(),
            file: file.to_string(),
            ..Default::default()
        });
        self.index.insert((object.to_string(), name.to_string()), i);
        i
    }

    fn line(&mut self, text: &str) -> Result<(), String> {
        let text = text.trim_end();
        if text.is_empty() || text.starts_with('#') {
            return Ok(());
        }
        let first = text.as_bytes()[0];
        if first.is_ascii_digit() || first == b'+' || first == b'-' || first == b'*' {
            return self.cost_line(text);
        }
        // `key=value` specifications and `key: value` headers; a header's value may hold
        // `=` (`desc: Trigger: --dump-after=f`), so whichever separator comes first wins.
        match (text.find('='), text.find(':')) {
            (Some(e), c) if c.is_none_or(|c| e < c) => return self.spec(&text[..e], &text[e + 1..]),
            (_, Some(c)) => return self.header(text[..c].trim(), text[c + 1..].trim()),
            _ => {}
        }
        Err(format!("unrecognised line `{}`", truncate(text)))
    }

    fn header(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "events" => self.profile.events = value.split_whitespace().map(str::to_string).collect(),
            "positions" => {
                let n = value.split_whitespace().count();
                if n == 0 || n > 2 {
                    return Err(format!("unsupported positions `{value}`"));
                }
                self.positions = n;
            }
            // `summary:` is the event total of the part; `totals:` (the sum of the cost
            // lines) is only a fallback, as it can exceed the summary in the first part
            // after a zeroing.
            "summary" | "totals" => {
                let first = value.split_whitespace().next().unwrap_or("0");
                let v: u64 = first.parse().map_err(|_| format!("bad {key} `{value}`"))?;
                if v > MAX_TOTAL {
                    return Err(format!("{key} `{value}` is more than 2^53"));
                }
                if key == "summary" || self.summary.is_none() {
                    self.summary = Some(v);
                }
            }
            // version, creator, pid, cmd, part, desc, thread, event, ...: not needed.
            _ => {}
        }
        Ok(())
    }

    fn spec(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "ob" => self.ob = self.objects.resolve(value)?,
            "fl" => {
                self.fl = self.files.resolve(value)?;
                self.fi = None;
            }
            "fi" | "fe" => self.fi = Some(self.files.resolve(value)?),
            "fn" => {
                let name = self.fns.resolve(value)?;
                let (ob, fl) = (self.ob.clone(), self.fl.clone());
                self.current = Some(self.function(&ob, &name, &fl));
                self.fi = None;
                self.pending_call = None;
            }
            "cob" => self.cob = Some(self.objects.resolve(value)?),
            "cfi" | "cfl" => {
                self.files.resolve(value)?;
            }
            "cfn" => self.cfn = Some(self.fns.resolve(value)?),
            "calls" => {
                let mut it = value.split_whitespace();
                let count: u64 = it
                    .next()
                    .ok_or("calls= without a count")?
                    .parse()
                    .map_err(|_| format!("bad call count `{value}`"))?;
                let callee_name = self.cfn.take().ok_or("calls= without a preceding cfn=")?;
                let object = self.cob.take().unwrap_or_else(|| self.ob.clone());
                let callee = self.function(&object, &callee_name, "");
                self.pending_call = Some((callee, count));
            }
            // Jumps (--collect-jumps) carry no cost we use.
            "jump" | "jcnd" => {}
            _ => return Err(format!("unknown specification `{key}=`")),
        }
        Ok(())
    }

    fn cost_line(&mut self, text: &str) -> Result<(), String> {
        let caller = self.current.ok_or("cost line before any fn=")?;
        let mut toks = text.split_whitespace();
        if self.last_pos.len() != self.positions {
            self.last_pos = vec![0; self.positions];
        }
        let mut line = 0u64;
        for k in 0..self.positions {
            let tok = toks.next().ok_or("cost line without a position")?;
            let p = position(tok, self.last_pos[k])?;
            self.last_pos[k] = p;
            // With `positions: instr line` the line is the second position.
            if k == self.positions - 1 {
                line = p;
            }
        }
        let cost: u64 = match toks.next() {
            Some(t) => t.parse().map_err(|_| format!("bad cost `{t}`"))?,
            None => 0,
        };
        for t in toks {
            t.parse::<u64>().map_err(|_| format!("bad cost `{t}`"))?;
        }
        let count = self.pending_call.map_or(0, |(_, n)| n);
        self.sum = self
            .sum
            .checked_add(cost)
            .and_then(|s| s.checked_add(count))
            .filter(|&s| s <= MAX_TOTAL)
            .ok_or("costs and call counts add up to more than 2^53")?;
        if let Some((callee, count)) = self.pending_call.take() {
            let arcs = &mut self.profile.arcs;
            match arcs.iter_mut().find(|a| a.caller == caller && a.callee == callee) {
                Some(a) => {
                    a.calls += count;
                    a.cost += cost;
                }
                None => arcs.push(Arc {
                    caller,
                    callee,
                    calls: count,
                    cost,
                }),
            }
            return Ok(());
        }
        let file = self.fi.clone().unwrap_or_else(|| self.fl.clone());
        let f = &mut self.profile.functions[caller];
        f.self_cost += cost;
        *f.lines
            .entry((file, u32::try_from(line).unwrap_or(u32::MAX)))
            .or_insert(0) += cost;
        Ok(())
    }
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Parses callgrind output text.
pub fn parse(text: &str) -> Result<Profile, ParseError> {
    let mut p = Parser {
        profile: Profile::default(),
        index: HashMap::new(),
        objects: Names::default(),
        files: Names::default(),
        fns: Names::default(),
        positions: 1,
        ob: String::new(),
        fl: String::new(),
        fi: None,
        current: None,
        cob: None,
        cfn: None,
        pending_call: None,
        last_pos: Vec::new(),
        summary: None,
        sum: 0,
    };
    for (i, line) in text.lines().enumerate() {
        p.line(line).map_err(|message| ParseError { line: i + 1, message })?;
    }
    if p.profile.events.is_empty() {
        return Err(ParseError {
            line: text.lines().count(),
            message: "no `events:` header: not callgrind output".into(),
        });
    }
    let sum: u64 = p.profile.functions.iter().map(|f| f.self_cost).sum();
    p.profile.total = p.summary.unwrap_or(sum);
    Ok(p.profile)
}

impl Profile {
    /// Adds another profile (a later dump of the same program) into this one.
    pub fn merge(&mut self, other: &Profile) {
        if self.events.is_empty() {
            self.events = other.events.clone();
        }
        let mut map = Vec::with_capacity(other.functions.len());
        for f in &other.functions {
            let i = match self
                .functions
                .iter()
                .position(|g| g.name == f.name && g.object == f.object)
            {
                Some(i) => i,
                None => {
                    self.functions.push(Function {
                        lines: BTreeMap::new(),
                        self_cost: 0,
                        ..f.clone()
                    });
                    self.functions.len() - 1
                }
            };
            let g = &mut self.functions[i];
            if g.file.is_empty() {
                g.file = f.file.clone();
            }
            g.self_cost += f.self_cost;
            for (k, c) in &f.lines {
                *g.lines.entry(k.clone()).or_insert(0) += c;
            }
            map.push(i);
        }
        for a in &other.arcs {
            let (caller, callee) = (map[a.caller], map[a.callee]);
            match self.arcs.iter_mut().find(|b| b.caller == caller && b.callee == callee) {
                Some(b) => {
                    b.calls += a.calls;
                    b.cost += a.cost;
                }
                None => self.arcs.push(Arc { caller, callee, ..*a }),
            }
        }
        self.total += other.total;
    }

    /// Function `root` and every function it reaches through calls.
    pub fn reachable(&self, root: usize) -> Vec<bool> {
        let mut seen = vec![false; self.functions.len()];
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            stack.extend(self.arcs.iter().filter(|a| a.caller == i).map(|a| a.callee));
        }
        seen
    }

    /// Inclusive cost of function `i`: its self cost plus what its calls to other
    /// functions cost (recursive calls of itself are already inside its self cost).
    pub fn inclusive(&self, i: usize) -> u64 {
        self.functions[i].self_cost
            + self
                .arcs
                .iter()
                .filter(|a| a.caller == i && a.callee != i)
                .map(|a| a.cost)
                .sum::<u64>()
    }

    /// How many times function `i` was called (from anywhere, itself included).
    pub fn calls(&self, i: usize) -> u64 {
        self.arcs.iter().filter(|a| a.callee == i).map(|a| a.calls).sum()
    }

    /// Index of the first function with this exact name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.functions.iter().position(|f| f.name == name)
    }

    /// Arcs leaving function `i`, costliest first.
    pub fn callees(&self, i: usize) -> Vec<Arc> {
        let mut v: Vec<Arc> = self.arcs.iter().filter(|a| a.caller == i).copied().collect();
        v.sort_by(|a, b| b.cost.cmp(&a.cost).then(a.callee.cmp(&b.callee)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-written in the format of valgrind's manual: main calls f twice (inclusive 400)
    /// and g once; f calls g once per call. Compressed names and positions throughout.
    const SAMPLE: &str = "version: 1
creator: hand
desc: Trigger: --dump-after=f
positions: line
events: Ir
summary: 1000

ob=(1) /bin/prog
fl=(1) prog.c
fn=(1) main
10 100
+2 50
cfn=(2) f
calls=2 20
* 400
cfn=(3) g
calls=1 30
-1 250

fn=(2)
20 300
cfi=(1)
cfn=(3)
calls=2 30
21 100

fn=(3)
fi=(2) inline.h
30 200
fe=(1)
31 0
";

    #[test]
    fn reads_functions_arcs_and_lines() {
        let p = parse(SAMPLE).unwrap();
        assert_eq!(p.events, vec!["Ir"]);
        assert_eq!(p.total, 1000);
        let main = p.find("main").unwrap();
        let f = p.find("f").unwrap();
        let g = p.find("g").unwrap();
        assert_eq!(p.functions[main].self_cost, 150);
        assert_eq!(p.functions[f].self_cost, 300);
        assert_eq!(p.functions[g].self_cost, 200);
        assert_eq!(p.inclusive(main), 150 + 400 + 250);
        assert_eq!(p.inclusive(f), 400);
        assert_eq!(p.calls(f), 2);
        assert_eq!(p.calls(g), 3);
        // Lines: main's `+2` is line 12; g's cost sits in the inlined header.
        assert_eq!(p.functions[main].lines[&("prog.c".to_string(), 12)], 50);
        assert_eq!(p.functions[g].lines[&("inline.h".to_string(), 30)], 200);
        assert_eq!(p.callees(main)[0].callee, f);
        let q = parse("events: Ir\nfn=(below main)\n1 4\n").unwrap();
        assert_eq!(q.functions[0].name, "(below main)");
    }

    #[test]
    fn malformed_input_is_an_error_with_a_line() {
        for (text, line) in [
            ("events: Ir\nfn=(1) a\n10 x\n", 3),
            ("events: Ir\n10 5\n", 2),
            ("events: Ir\nfn=(7)\n", 2),
            ("events: Ir\nfn=(99999999999999999999999) x\n1 1\n1 x\n", 4),
            ("events: Ir\nfn=a\ncalls=1 2\n", 3),
            ("events: Ir\nfn=a\n5 1\n-9 1\n", 4),
            ("hello world\n", 1),
            ("fn=a\n1 1\n", 2),
            ("events: Ir\nfn=a\n1 9007199254740992\n2 1\n", 4),
            ("events: Ir\nsummary: 9007199254740993\n", 2),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn merged_dumps_add_up_and_reachability_follows_calls() {
        let mut p = parse(SAMPLE).unwrap();
        let q = parse(SAMPLE).unwrap();
        p.merge(&q);
        assert_eq!(p.total, 2000);
        let f = p.find("f").unwrap();
        assert_eq!(p.calls(f), 4);
        assert_eq!(p.inclusive(f), 800);
        let seen = p.reachable(f);
        assert!(seen[p.find("g").unwrap()] && !seen[p.find("main").unwrap()]);
    }

    #[test]
    fn hex_and_two_positions() {
        let p = parse("events: Ir Dr\npositions: instr line\nfn=x\n0x10 5 7 1\n+4 * 3\n").unwrap();
        let f = &p.functions[0];
        assert_eq!(f.self_cost, 10);
        assert_eq!(f.lines[&(String::new(), 5)], 10);
        assert_eq!(p.total, 10);
    }
}
