//! `profile.json` read by the real Hatchet (LLNL's `llnl-hatchet` from PyPI, in the project's
//! venv `.mpi/hatchet`, installed by `scripts/lib.sh`'s `hatchet_install`, which `scripts/test`
//! runs): `hatchet.GraphFrame.from_caliper(path)` must load the profiles of the recorded jobs
//! (`tests/golden/`) as the call tree of the reduction, with its calls, times and pvar and
//! event metrics per rank, the exclusive/inclusive pairs where Hatchet looks for them, and the
//! run's metadata.
//!
//! Without the venv the test says how to install it and passes, except under `CI=true`, where
//! it fails. `HATCHET_PYTHON` names another interpreter with Hatchet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mpit_prof::model::{MetricData, RankProfile};
use mpit_prof::reduce::{Profile, reduce};
use mpit_prof::write;
use serde_json::Value;

/// Loads the file with Hatchet and prints what the test checks, as JSON (NaN as null).
const SCRIPT: &str = r#"
import json, math, sys
import hatchet as ht

gf = ht.GraphFrame.from_caliper(sys.argv[1])
paths, nodes = {}, []
# The tree as Hatchet's children links give it (the Caliper reader sets no parent links).
def walk(node, parent):
    path = (parent + "/" if parent else "") + node.frame["name"]
    paths[node] = path
    nodes.append({"path": path, "parent": parent, "type": node.frame["type"]})
    for child in node.children:
        walk(child, path)
for root in gf.graph.roots:
    walk(root, None)

def clean(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v

wanted = [c for c in sys.argv[2:] if c in gf.dataframe.columns]
rows = []
for (node, rank), r in gf.dataframe.iterrows():
    row = {"path": paths[node], "rank": int(rank)}
    for c in wanted:
        row[c] = clean(r[c])
    rows.append(row)
print(json.dumps({
    "nodes": nodes,
    "exc": list(gf.exc_metrics),
    "inc": list(gf.inc_metrics),
    "columns": [str(c) for c in gf.dataframe.columns],
    "metadata": {k: str(v) for k, v in gf.metadata.items()},
    "rows": rows,
}))
"#;

fn root() -> PathBuf {
    // examples/prof -> the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with Hatchet, or `None` (then the test passes saying so, except under CI).
fn python() -> Option<PathBuf> {
    let p = match std::env::var_os("HATCHET_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => root().join(".mpi/hatchet/bin/python"),
    };
    if p.exists() {
        return Some(p);
    }
    let msg = format!(
        "{} missing: install Hatchet with `bash -c 'source scripts/lib.sh; hatchet_install'` \
         (scripts/test does)",
        p.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("SKIPPED (not under CI): {msg}");
    None
}

fn recorded(name: &str) -> Profile {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.ranks.json"));
    let ranks: Vec<RankProfile> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    reduce(&ranks)
}

/// Hatchet's view of `p`'s `profile.json`, with the values of `columns` per (node, rank).
fn load(python: &Path, p: &Profile, name: &str, columns: &[&str]) -> Value {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prof_hatchet");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.profile.json"));
    std::fs::write(&file, write::caliper::render(p)).unwrap();
    let out = Command::new(python)
        .arg("-c")
        .arg(SCRIPT)
        .arg(&file)
        .args(columns)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "Hatchet failed to load {}:\n{stderr}",
        file.display()
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)))
}

/// Hatchet's tree is the reduction's: the same paths, each under the same parent.
fn same_tree(h: &Value, p: &Profile) {
    let hatchet: BTreeMap<String, Option<String>> = h["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            assert_eq!(n["type"], "region");
            (
                n["path"].as_str().unwrap().to_string(),
                n["parent"].as_str().map(String::from),
            )
        })
        .collect();
    let ours: BTreeMap<String, Option<String>> = (0..p.nodes.len())
        .map(|i| (p.path(i), p.nodes[i].parent.map(|q| p.path(q))))
        .collect();
    assert_eq!(hatchet, ours);
    assert_eq!(
        h["nodes"].as_array().unwrap().len(),
        p.nodes.len(),
        "no node twice"
    );
}

/// The value Hatchet has for `column` at (`path`, `rank`).
fn cell(h: &Value, path: &str, rank: usize, column: &str) -> Value {
    h["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path && r["rank"] == rank)
        .unwrap_or_else(|| panic!("no row for {path} rank {rank}"))[column]
        .clone()
}

#[test]
fn hatchet_loads_the_call_tree_and_metrics() {
    let Some(python) = python() else { return };
    let p = recorded("openmpi5");
    let pvar = "mpit.coll_monitoring_a2a_count";
    let raw = "mpit.pml_monitoring_messages_size";
    let h = load(
        &python,
        &p,
        "openmpi5",
        &[
            "Calls",
            "time",
            "time (inc)",
            "node.kind",
            pvar,
            &format!("{pvar} (inc)"),
            raw,
        ],
    );
    same_tree(&h, &p);
    let exc: Vec<&str> = h["exc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let inc: Vec<&str> = h["inc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for m in ["time", "Calls", pvar, raw] {
        assert!(
            exc.contains(&m),
            "{m} not among the exclusive metrics {exc:?}"
        );
    }
    for m in ["time (inc)".to_string(), format!("{pvar} (inc)")] {
        assert!(
            inc.contains(&m.as_str()),
            "{m} not among the inclusive metrics {inc:?}"
        );
    }
    assert_eq!(h["metadata"]["mpi.world.size"], "4");
    assert_eq!(h["metadata"]["program"], "known_pattern");
    assert_eq!(h["metadata"]["mpit-prof.mode"], "call");

    // Every (node, rank): calls and times as reduced (times in seconds).
    for (i, n) in p.nodes.iter().enumerate() {
        let path = p.path(i);
        for (ri, r) in p.ranks.iter().enumerate() {
            let v = n.per_rank[ri].as_ref();
            let calls = cell(&h, &path, r.rank, "Calls").as_f64().unwrap();
            assert_eq!(
                calls,
                v.map_or(0, |v| v.calls) as f64,
                "{path} rank {}",
                r.rank
            );
            let t = cell(&h, &path, r.rank, "time (inc)").as_f64().unwrap();
            let want = v.map_or(0, |v| v.time_ns) as f64 / 1e9;
            assert!(
                (t - want).abs() < 1e-12,
                "{path} rank {}: {t} vs {want}",
                r.rank
            );
            let kind = cell(&h, &path, r.rank, "node.kind");
            assert_eq!(kind, n.kind.name(), "{path}");
        }
    }
    // MPI_Send: rank i called it i+1 times.
    for rank in 0..4 {
        let calls = cell(&h, "known_pattern/exchange/MPI_Send", rank, "Calls");
        assert_eq!(calls.as_f64(), Some((rank + 1) as f64));
    }
    // A counter's delta: exclusive in the barriers, inclusive at the root.
    let c = p
        .columns
        .iter()
        .position(|c| format!("mpit.{}", c.label) == pvar)
        .unwrap();
    let root = &p.nodes[0].per_rank[0].as_ref().unwrap().inclusive[c];
    let MetricData::Delta { sum } = *root else {
        panic!("{root:?}")
    };
    assert!(sum > 0.0);
    assert_eq!(
        cell(&h, "known_pattern", 0, &format!("{pvar} (inc)")).as_f64(),
        Some(sum)
    );
    assert_eq!(cell(&h, "known_pattern", 0, pvar).as_f64(), Some(0.0));
    // A size variable's last value: rank 3 sent 4 messages of 4000 bytes.
    let last = cell(&h, "known_pattern", 3, raw).as_f64().unwrap();
    assert_eq!(last, 16000.0);
}

#[test]
fn hatchet_loads_event_counts_and_a_profile_without_pvars() {
    let Some(python) = python() else { return };
    let p = recorded("mpich-ev");
    let ev = "event.unexp_message_enqueued";
    let h = load(&python, &p, "mpich-ev", &[ev, &format!("{ev} (inc)")]);
    same_tree(&h, &p);
    let e = p
        .event_types
        .iter()
        .position(|t| t == "unexp_message_enqueued")
        .unwrap();
    for (i, n) in p.nodes.iter().enumerate() {
        for (ri, r) in p.ranks.iter().enumerate() {
            let want = n.per_rank[ri].as_ref().map_or(0, |v| v.inclusive_events[e]);
            let got = cell(&h, &p.path(i), r.rank, &format!("{ev} (inc)"));
            assert_eq!(
                got.as_f64(),
                Some(want as f64),
                "{} rank {}",
                p.path(i),
                r.rank
            );
        }
    }
    let total: f64 = p.nodes[0].inclusive_events[e].sum;
    assert!(total > 0.0, "the recorded job had unexpected messages");

    let p = recorded("mpich");
    let h = load(&python, &p, "mpich", &["Calls"]);
    same_tree(&h, &p);
    assert_eq!(
        cell(&h, "known_pattern/exchange/MPI_Recv", 0, "Calls").as_f64(),
        Some(4.0),
        "rank 0 receives from rank 3, 4 messages"
    );
}
