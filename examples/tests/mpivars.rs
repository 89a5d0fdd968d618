//! `mpit-list --json` against MPICH's own lister, `mpivars`.
//!
//! MPICH installs `mpivars` (`src/env/mpivars.c`), a C program that calls `MPI_Init_thread`,
//! then `MPI_T_init_thread`, and prints every control variable. Its control variable section
//! starts with `"<N> MPI Control Variables"`, then one line per variable:
//!
//! ```text
//! \t<name, left-aligned in 32 columns>=<value>\t<scope>\t<binding>\t<datatype>\t<verbosity>\t<description>
//! \t<name, left-aligned in 32 columns>\t<scope>\t<binding>\t<datatype>\t<verbosity>\t<description>
//! ```
//!
//! the first form when it could read a value: unbound variables of count 1 and datatype
//! `MPI_INT` (`%d`, the raw number also for enumerations), `MPI_UNSIGNED` (`%u`),
//! `MPI_UNSIGNED_LONG` (`%lu`), `MPI_UNSIGNED_LONG_LONG` (`%llu`), and `MPI_CHAR` variables
//! shorter than 512 characters (the string as is). Descriptions may contain newlines (MPICH
//! 5.0.2's algorithm lists), so the lines that do not have the five tab-separated fields
//! are continuation lines; an enumeration would follow as an `Enum ...` line (MPICH has none).
//! The section ends at `"<M> MPI Performance Variables"`.
//!
//! How its spelling maps onto `mpit-list --json`:
//!
//! | field | mpivars | mpit-list |
//! |---|---|---|
//! | name | padded with spaces to 32 columns | `name` |
//! | value | `%d`/`%u`/`%lu`/`%llu` or the string | `value`: a JSON number or string |
//! | scope | `SCOPE_ALL_EQ` | `scope`: `ALL_EQ` |
//! | binding | `No-object`, `MPI_COMM`, ... | `bind`: `NO_OBJECT`, `MPI_COMM`, ... |
//! | datatype | `MPI_INT` | `datatype`: `MPI_INT` |
//! | verbosity | `VERBOSITY_USER_BASIC` | `verbosity`: `USER_BASIC` |
//!
//! Both run after `MPI_Init` with no variable changed, so every value must be equal.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value as Json;

/// One control variable as mpivars printed it, normalised to mpit-list's spelling.
#[derive(Debug, PartialEq)]
struct Var {
    value: Option<String>,
    scope: String,
    bind: String,
    datatype: String,
    verbosity: String,
}

/// The first `mpivars` on `PATH`.
fn find_mpivars() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("mpivars"))
        .find(|p| p.is_file())
}

/// The control variables of mpivars' output by name, and the count it announced.
fn parse_mpivars(out: &str) -> (BTreeMap<String, Var>, usize) {
    let mut lines = out.lines();
    let announced = lines
        .by_ref()
        .find_map(|l| l.strip_suffix(" MPI Control Variables"))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .expect("mpivars printed no \"<N> MPI Control Variables\" line");
    let mut vars = BTreeMap::new();
    for line in lines {
        if line.ends_with(" MPI Performance Variables") {
            break;
        }
        let Some(rest) = line.strip_prefix('\t') else {
            continue; // a continuation line of a description
        };
        let f: Vec<&str> = rest.splitn(6, '\t').collect();
        let [head, scope, bind, datatype, verbosity, ..] = f[..] else {
            continue;
        };
        let (Some(scope), Some(verbosity)) = (
            scope.strip_prefix("SCOPE_"),
            verbosity.strip_prefix("VERBOSITY_"),
        ) else {
            continue; // a continuation line that happens to start with a tab
        };
        let (name, value) = match head.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (head, None),
        };
        let bind = match bind {
            "No-object" => "NO_OBJECT".to_owned(),
            b => b.to_owned(),
        };
        let var = Var {
            value,
            scope: scope.to_owned(),
            bind,
            datatype: datatype.to_owned(),
            verbosity: verbosity.to_owned(),
        };
        let name = name.trim_end().to_owned();
        assert!(
            vars.insert(name.clone(), var).is_none(),
            "mpivars printed {name} twice"
        );
    }
    (vars, announced)
}

/// A JSON scalar as mpivars would print it.
fn json_as_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(u8::from(*b).to_string()),
        _ => None,
    }
}

#[test]
fn mpit_list_agrees_with_mpivars() {
    let implementation = mpit_safe::sys::IMPLEMENTATION;
    if implementation != "MPICH" {
        println!("skipped: mpivars is MPICH's tool, this is {implementation}");
        return;
    }
    let Some(mpivars) = find_mpivars() else {
        println!("skipped: no mpivars on PATH");
        return;
    };
    println!(
        "comparing with {} ({implementation} {})",
        mpivars.display(),
        mpit_safe::sys::IMPLEMENTATION_VERSION
    );

    let out = Command::new(&mpivars).output().expect("running mpivars");
    assert!(out.status.success(), "mpivars failed: {out:?}");
    let (theirs, announced) = parse_mpivars(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        theirs.len(),
        announced,
        "parsed {} of the {announced} variables mpivars announced",
        theirs.len()
    );

    let out = Command::new(env!("CARGO_BIN_EXE_mpit-list"))
        .arg("--json")
        .output()
        .expect("running mpit-list");
    assert!(out.status.success(), "mpit-list failed: {out:?}");
    let doc: Json = serde_json::from_slice(&out.stdout).expect("mpit-list --json is JSON");
    assert_eq!(doc["implementation"], implementation);
    let ours: BTreeMap<String, &Json> = doc["cvars"]
        .as_array()
        .expect("cvars array")
        .iter()
        .map(|v| (v["name"].as_str().expect("name").to_owned(), v))
        .collect();

    let mut mismatches = Vec::new();
    let mut values = 0;
    for (name, t) in &theirs {
        let Some(o) = ours.get(name) else {
            mismatches.push(format!("{name}: listed by mpivars, not by mpit-list"));
            continue;
        };
        let field = |k: &str| o[k].as_str().unwrap_or("<missing>").to_owned();
        let mine = Var {
            value: t.value.as_ref().and_then(|_| json_as_text(&o["value"])),
            scope: field("scope"),
            bind: field("bind"),
            datatype: field("datatype"),
            verbosity: field("verbosity"),
        };
        if t.value.is_some() {
            values += 1;
        }
        if &mine != t {
            mismatches.push(format!("{name}: mpivars {t:?}, mpit-list {mine:?}"));
        }
    }
    for name in ours.keys().filter(|n| !theirs.contains_key(*n)) {
        mismatches.push(format!("{name}: listed by mpit-list, not by mpivars"));
    }
    println!(
        "{} variables compared (name, scope, binding, datatype, verbosity), {values} values; {} mismatches",
        theirs.len(),
        mismatches.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert_eq!(doc["counts"]["holes"], 0, "MPICH has no holes");
}
