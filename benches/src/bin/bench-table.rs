//! `bench-table FILE.jsonl... [--json OUT] [--header TEXT]`: the one table of `scripts/bench`.
//!
//! Reads the rows every bench appended ([`mpit_benches::record`], one JSON object per line, one
//! file per implementation), prints a matrix (operation × implementation → ratio of mpit-rs's
//! cost over C's, **bold** where above its target) and the full table (raw, safe, unit, ratio,
//! ratio of the fastest rounds, rounds, target) as Markdown, and writes every row with a
//! `met` field as one JSON document.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

/// The matrix's column order: the implementations of `scripts/lib.sh`, then any other.
const ORDER: [&str; 6] = [
    "mpich", "openmpi", "mpich5", "openmpi5", "intel", "mpich-ev",
];

fn main() {
    let mut files = Vec::new();
    let mut json_out = None;
    let mut header = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json_out = args.next(),
            "--header" => header = args.next(),
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        eprintln!("usage: bench-table FILE.jsonl... [--json OUT] [--header TEXT]");
        std::process::exit(2);
    }
    let mut rows: Vec<Value> = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| {
            eprintln!("{f}: {e}");
            std::process::exit(1)
        });
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            match serde_json::from_str::<Value>(line) {
                Ok(mut v) => {
                    let met = match (v["ratio"].as_f64(), v["target"].as_f64()) {
                        (Some(r), Some(t)) => json!(r <= t),
                        _ => Value::Null,
                    };
                    v["met"] = met;
                    rows.push(v);
                }
                Err(e) => eprintln!("{f}:{}: {e}", n + 1),
            }
        }
    }
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_owned();
    let mut keys: Vec<String> = Vec::new();
    for r in &rows {
        let k = s(r, "key");
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.sort_by_key(|k| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    // (bench, op) -> key -> row, in first-seen order of operations.
    let mut ops: Vec<(String, String)> = Vec::new();
    let mut cells: BTreeMap<(String, String, String), &Value> = BTreeMap::new();
    for r in &rows {
        let op = (s(r, "bench"), s(r, "op"));
        if !ops.contains(&op) {
            ops.push(op.clone());
        }
        cells.insert((op.0, op.1, s(r, "key")), r);
    }
    let mark = |r: &Value| {
        let ratio = r["ratio"]
            .as_f64()
            .map_or("-".into(), |x| format!("{x:.3}"));
        if r["met"] == json!(false) {
            format!("**{ratio}**")
        } else {
            ratio
        }
    };
    let mut md = String::new();
    if let Some(h) = &header {
        let _ = writeln!(md, "{h}\n");
    }
    let _ = writeln!(
        md,
        "| bench | operation | target | {} |\n|---|---|---|{}",
        keys.join(" | "),
        "---|".repeat(keys.len())
    );
    for (bench, op) in &ops {
        let target = keys
            .iter()
            .find_map(|k| cells.get(&(bench.clone(), op.clone(), k.clone())))
            .and_then(|r| r["target"].as_f64())
            .map_or("-".into(), |t| format!("≤ {t:.3}"));
        let row: Vec<String> = keys
            .iter()
            .map(|k| {
                cells
                    .get(&(bench.clone(), op.clone(), k.clone()))
                    .map_or("-".into(), |r| mark(r))
            })
            .collect();
        let _ = writeln!(md, "| {bench} | {op} | {target} | {} |", row.join(" | "));
    }
    let missed = rows.iter().filter(|r| r["met"] == json!(false)).count();
    let _ = writeln!(
        md,
        "\nRatio: mpit-rs's cost over the raw C call's in the same run (median of per-round \
         ratios where there are rounds; for rates, C's rate over ours). **Bold**: above its \
         target ({missed} of {} rows).\n",
        rows.len()
    );
    let _ = writeln!(
        md,
        "| bench | operation | implementation | unit | raw | safe | ratio | fastest rounds | \
         rounds | target | note |\n|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (bench, op) in &ops {
        for k in &keys {
            let Some(r) = cells.get(&(bench.clone(), op.clone(), k.clone())) else {
                continue;
            };
            let f = |name: &str| r[name].as_f64().map_or("-".into(), |x| format!("{x:.3}"));
            let _ = writeln!(
                md,
                "| {bench} | {op} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s(r, "implementation"),
                s(r, "unit"),
                f("raw"),
                f("safe"),
                mark(r),
                f("ratio_of_mins"),
                r["rounds"],
                f("target"),
                s(r, "note"),
            );
        }
    }
    print!("{md}");
    if let Some(out) = json_out {
        let doc = json!({ "header": header, "rows": rows, "markdown": md });
        if let Err(e) = std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap()) {
            eprintln!("{out}: {e}");
            std::process::exit(1);
        }
        eprintln!("written: {out}");
    }
}
