//! `mpit-list --diff A.json B.json`: what differs between two `--json` listings (two
//! implementations, two versions of one, two settings of the environment).
//!
//! Control variables, performance variables, categories, event types and sources are matched
//! by name (indices differ between implementations and versions, so they are not compared;
//! performance variables by name and class, which identify one (MPI-4.1 §16.3.7), shown as
//! `name [CLASS]`; another entry of a name already seen as `name (2)`, ...):
//! each kind lists the names only A has (removed), only B has (added), and for the names both
//! have, every field whose value differs (`value`, `scope`, `description`, ...; a field one
//! side lacks counts as `null`). A category's members are compared by name too. The documents
//! are read as JSON without a fixed model, so listings of other versions of the tool compare as
//! well; what is not an `mpit-list --json` document (no `cvars` and `pvars` arrays) is an error.
//!
//! The result ([`Diff`]) renders as text ([`Diff::text`]) or as one JSON document
//! ([`Diff::json`], schema `examples/schemas/mpit-list-diff.schema.json`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value as Json;

/// What differs between two listings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// The first listing (the "before" side: `-` lines).
    pub a: Side,
    /// The second listing (the "after" side: `+` lines).
    pub b: Side,
    /// Whether the two listings were made with different filters (then a variable one filter
    /// excluded shows as added or removed).
    pub filters_differ: bool,
    /// Per kind, in the order `cvars`, `pvars`, `categories`, `event_types`, `sources`.
    pub kinds: BTreeMap<&'static str, KindDiff>,
}

/// Which listing one side is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Side {
    /// The file it was read from.
    pub path: String,
    /// Its `implementation` and `version` (the header's).
    pub implementation: String,
    /// Its `library` (the loaded library in its own words).
    pub library: String,
}

/// The differences of one kind of entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KindDiff {
    /// Names only B has, in B's order.
    pub added: Vec<String>,
    /// Names only A has, in A's order.
    pub removed: Vec<String>,
    /// Names both have whose fields differ, in A's order.
    pub changed: Vec<Changed>,
    /// How many names both have with no difference.
    pub unchanged: usize,
}

/// One entry both listings have, with the fields that differ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Changed {
    /// Its name.
    pub name: String,
    /// Each differing field, in key order.
    pub fields: Vec<FieldChange>,
}

/// A field whose value differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldChange {
    /// The field's key in the `--json` document (`value`, `scope`, ...).
    pub field: String,
    /// Its value in A (`null` where A lacks it).
    pub a: Json,
    /// Its value in B (`null` where B lacks it).
    pub b: Json,
}

/// The kinds compared: their name in the diff, and where the `--json` document keeps them.
const KINDS: [(&str, &[&str]); 5] = [
    ("cvars", &["cvars"]),
    ("pvars", &["pvars"]),
    ("categories", &["categories"]),
    ("event_types", &["events", "event_types"]),
    ("sources", &["events", "sources"]),
];

/// Fields never compared: the index (an implementation's numbering).
const IGNORED: [&str; 1] = ["index"];

/// Reads two `--json` listings and compares them.
pub fn diff_files(a: &Path, b: &Path) -> Result<Diff, String> {
    let read = |p: &Path| -> Result<Json, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let doc: Json =
            serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", p.display()))?;
        if !doc["cvars"].is_array() || !doc["pvars"].is_array() {
            return Err(format!(
                "{}: not an `mpit-list --json` document (no cvars and pvars arrays)",
                p.display()
            ));
        }
        Ok(doc)
    };
    Ok(diff(
        &read(a)?,
        &a.display().to_string(),
        &read(b)?,
        &b.display().to_string(),
    ))
}

/// Compares two `--json` listings, read from `a_path` and `b_path`.
pub fn diff(a: &Json, a_path: &str, b: &Json, b_path: &str) -> Diff {
    let side = |d: &Json, path: &str| Side {
        path: path.to_owned(),
        implementation: format!(
            "{} {}",
            d["implementation"].as_str().unwrap_or("?"),
            d["version"].as_str().unwrap_or("?")
        ),
        library: d["library"].as_str().unwrap_or("?").to_owned(),
    };
    let (names_a, names_b) = (Names::of(a), Names::of(b));
    let kinds = KINDS
        .iter()
        .map(|&(kind, path)| {
            let entries = |d: &Json, names: &Names| -> Vec<(String, Json)> {
                let list = path.iter().fold(d, |v, k| &v[k]);
                keyed(kind, list.as_array().map(Vec::as_slice).unwrap_or_default())
                    .into_iter()
                    .map(|(name, e)| {
                        let e = if kind == "categories" {
                            names.members_by_name(e)
                        } else {
                            e.clone()
                        };
                        (name, e)
                    })
                    .collect()
            };
            (kind, compare(&entries(a, &names_a), &entries(b, &names_b)))
        })
        .collect();
    Diff {
        a: side(a, a_path),
        b: side(b, b_path),
        filters_differ: a["filters"] != b["filters"],
        kinds,
    }
}

/// The entries of a list of `kind` by name (performance variables by name and class, as
/// `name [CLASS]`); a name that occurs again is told apart as `name (2)`, ...
fn keyed<'a>(kind: &str, list: &'a [Json]) -> Vec<(String, &'a Json)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    list.iter()
        .map(|e| {
            let mut name = e["name"].as_str().unwrap_or("").to_owned();
            if kind == "pvars" {
                name = format!("{name} [{}]", e["class"].as_str().unwrap_or("?"));
            }
            let n = seen.entry(name.clone()).or_default();
            *n += 1;
            let key = if *n == 1 {
                name
            } else {
                format!("{name} ({n})")
            };
            (key, e)
        })
        .collect()
}

/// The names of a listing's variables, categories and event types by index, to compare a
/// category's members by name.
struct Names<'a> {
    by_kind: [(&'static str, HashMap<u64, &'a str>); 4],
}

impl<'a> Names<'a> {
    fn of(d: &'a Json) -> Names<'a> {
        let map = |list: &'a Json| -> HashMap<u64, &'a str> {
            list.as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|e| Some((e["index"].as_u64()?, e["name"].as_str()?)))
                .collect()
        };
        Names {
            by_kind: [
                ("cvars", map(&d["cvars"])),
                ("pvars", map(&d["pvars"])),
                ("categories", map(&d["categories"])),
                ("events", map(&d["events"]["event_types"])),
            ],
        }
    }

    /// A category with its member lists as sorted names (`#N` for an index the listing does
    /// not name): the order of the members is the implementation's, not a difference.
    fn members_by_name(&self, c: &Json) -> Json {
        let mut c = c.clone();
        for (kind, names) in &self.by_kind {
            if let Some(list) = c.get_mut(*kind).and_then(Json::as_array_mut) {
                let mut named: Vec<String> = list
                    .iter()
                    .map(|m| match m.as_u64() {
                        Some(i) => names.get(&i).map_or(format!("#{i}"), |n| n.to_string()),
                        None => m.to_string(),
                    })
                    .collect();
                named.sort();
                *list = named.into_iter().map(Json::from).collect();
            }
        }
        c
    }
}

/// The differences between two lists of named entries.
fn compare(a: &[(String, Json)], b: &[(String, Json)]) -> KindDiff {
    let in_a: HashMap<&str, &Json> = a.iter().map(|(n, e)| (n.as_str(), e)).collect();
    let in_b: HashMap<&str, &Json> = b.iter().map(|(n, e)| (n.as_str(), e)).collect();
    let mut d = KindDiff {
        added: b
            .iter()
            .filter(|(n, _)| !in_a.contains_key(n.as_str()))
            .map(|(n, _)| n.clone())
            .collect(),
        ..KindDiff::default()
    };
    for (name, ea) in a {
        let Some(eb) = in_b.get(name.as_str()) else {
            d.removed.push(name.clone());
            continue;
        };
        let fields = changed_fields(ea, eb);
        if fields.is_empty() {
            d.unchanged += 1;
        } else {
            d.changed.push(Changed {
                name: name.clone(),
                fields,
            });
        }
    }
    d
}

/// The fields of two entries whose values differ, in key order (`index` not compared).
fn changed_fields(a: &Json, b: &Json) -> Vec<FieldChange> {
    let empty = serde_json::Map::new();
    let (ma, mb) = (
        a.as_object().unwrap_or(&empty),
        b.as_object().unwrap_or(&empty),
    );
    let keys: std::collections::BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
    keys.into_iter()
        .filter(|k| !IGNORED.contains(&k.as_str()))
        .filter_map(|k| {
            let (va, vb) = (
                ma.get(k).unwrap_or(&Json::Null),
                mb.get(k).unwrap_or(&Json::Null),
            );
            (va != vb).then(|| FieldChange {
                field: k.clone(),
                a: va.clone(),
                b: vb.clone(),
            })
        })
        .collect()
}

/// Field values longer than this are cut in the text (the JSON has them whole).
const MAX_SHOWN: usize = 120;

/// A value as the text shows it: compact JSON, cut after [`MAX_SHOWN`] characters.
fn show(v: &Json) -> String {
    let s = v.to_string();
    match s.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s,
    }
}

impl Diff {
    /// The diff as one pretty-printed JSON document, with a final newline.
    pub fn json(&self) -> String {
        crate::serde_util::pretty_json(self)
    }

    /// The diff as text: a heading, then per kind its counts and one line per added (`+`),
    /// removed (`-`) and changed (`~`) name, each changed field under it as `A -> B`.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "A: {} ({}), {}",
            self.a.implementation, self.a.library, self.a.path
        );
        let _ = writeln!(
            s,
            "B: {} ({}), {}",
            self.b.implementation, self.b.library, self.b.path
        );
        if self.filters_differ {
            s += "note: the listings were made with different filters\n";
        }
        for (kind, _) in KINDS {
            let Some(d) = self.kinds.get(kind) else {
                continue;
            };
            let _ = writeln!(
                s,
                "\n{}: {} added, {} removed, {} changed, {} unchanged",
                kind.replace('_', " "),
                d.added.len(),
                d.removed.len(),
                d.changed.len(),
                d.unchanged
            );
            for n in &d.added {
                let _ = writeln!(s, "  + {n}");
            }
            for n in &d.removed {
                let _ = writeln!(s, "  - {n}");
            }
            for c in &d.changed {
                let _ = writeln!(s, "  ~ {}", c.name);
                for f in &c.fields {
                    let _ = writeln!(s, "      {}: {} -> {}", f.field, show(&f.a), show(&f.b));
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::diff;

    #[test]
    fn matches_by_name_and_ignores_indices() {
        let a = json!({
            "implementation": "MPICH", "version": "4.0.2", "library": "MPICH 4.0.2",
            "filters": {"name": null},
            "cvars": [
                {"index": 0, "name": "X", "value": 1, "scope": "LOCAL"},
                {"index": 1, "name": "GONE", "value": 0},
                {"index": 2, "name": "SAME", "value": "s"},
            ],
            "pvars": [],
            "categories": [{"index": 0, "name": "c", "cvars": [0, 2], "pvars": []}],
            "events": {"event_types": [], "sources": []},
        });
        let b = json!({
            "implementation": "MPICH", "version": "5.0.2", "library": "MPICH 5.0.2",
            "filters": {"name": null},
            "cvars": [
                {"index": 5, "name": "SAME", "value": "s"},
                {"index": 6, "name": "X", "value": 2, "scope": "LOCAL", "env": "X"},
                {"index": 7, "name": "NEW", "value": 0},
            ],
            "pvars": [],
            "categories": [{"index": 3, "name": "c", "cvars": [6, 7], "pvars": []}],
        });
        let d = diff(&a, "a.json", &b, "b.json");
        let cv = &d.kinds["cvars"];
        assert_eq!(cv.added, ["NEW"]);
        assert_eq!(cv.removed, ["GONE"]);
        assert_eq!(cv.unchanged, 1);
        assert_eq!(cv.changed.len(), 1);
        let fields: Vec<_> = cv.changed[0].fields.iter().map(|f| &f.field).collect();
        assert_eq!(fields, ["env", "value"]);
        let cat = &d.kinds["categories"].changed[0].fields[0];
        assert_eq!(cat.field, "cvars");
        assert_eq!(
            (&cat.a, &cat.b),
            (&json!(["SAME", "X"]), &json!(["NEW", "X"]))
        );
        assert!(!d.filters_differ);
        let text = d.text();
        assert!(
            text.contains("cvars: 1 added, 1 removed, 1 changed, 1 unchanged"),
            "{text}"
        );
        assert!(
            text.contains("  ~ X\n      env: null -> \"X\"\n      value: 1 -> 2\n"),
            "{text}"
        );
    }
}
