//! Runs `mpit-conform --json` against the installed MPI and compares every property's status
//! and graded findings with the expectation file checked in for this implementation
//! (`examples/conformance/expected/<key>.expected`), then compiles and runs the C reproducer of every
//! finding and checks that it shows the same behaviour without Rust (a crash as a crash, the
//! same wrong error class, the same accepted input or wrong answer).
//!
//! Expectation lines: `property-id<TAB>status[<TAB>finding ...]`, status `pass`, `skip`,
//! `finding` or `launcher-refused`, each finding `kind/grade/rule-id` (e.g.
//! `crash/unchecked-input/000-1.2.9-error-codes`), sorted. The test fails when a status or a
//! finding appears, disappears or changes grade, printing the difference and the report's
//! details, so a change in our code or in the MPI is noticed.
//!
//! The key comes from the library actually loaded (`MPI_Get_library_version`, in the report;
//! `mpit_conformance::implementation_key`): `mpich`, `mpich-ev`, `mpich5`, `openmpi`,
//! `openmpi5`, `intel`. Properties that must find material on an implementation (the event
//! properties on `mpich-ev`, the pvar properties where pvars exist after `MPI_Init`) fail when
//! they skip, also when recording.
//!
//! Where the standard leaves the behaviour undefined and what is seen depends on the process's
//! memory (Intel MPI's `MPI_T_pvar_handle_alloc` reads past its table: an out-of-range index
//! crashes, is accepted or is refused), a line may list alternatives separated by ` | `, with a
//! comment above it saying why; any one of them passes.
//!
//! Set `MPIT_CONFORM_RECORD=1` to write the file from the current run instead of comparing
//! (a line with alternatives that still holds is kept as written, with its comment).
//! Every report is also validated against `examples/schemas/mpit-conform.schema.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mpit_conformance::{Expect, build_key, implementation_key};
use mpit_test_support::schema;
use serde_json::Value as Json;

/// The properties that must not skip on an implementation: what it is known to have after
/// `MPI_Init` (DESIGN.md's table: pvars on Open MPI, Intel MPI and mpich-ev; one source and
/// two event types on mpich-ev). A skip there means the property looked at nothing.
fn material_required(key: &str) -> &'static [&'static str] {
    const PVARS: &[&str] = &["roundtrip.pvar", "pvar.class-datatype"];
    match key {
        "mpich-ev" => &[
            "roundtrip.pvar",
            "pvar.class-datatype",
            "events.sources",
            "events.index",
            "events.delivery",
        ],
        "openmpi" | "openmpi5" | "intel" => PVARS,
        _ => &[],
    }
}

/// One property of a report: status and sorted finding tags.
type Line = (String, Vec<String>);

/// One property's expectation: the outcomes it may have (one, or several where the standard
/// leaves the behaviour undefined and what is seen depends on the process's memory), and its
/// text in the file with the comment lines right above it (kept when re-recording).
#[derive(Debug)]
struct Expected {
    alternatives: Vec<Line>,
    text: String,
}

/// Parses an expectation file. A line is `id<TAB>status[<TAB>finding ...]`; alternatives are
/// separated by ` | ` (`id<TAB>finding<TAB>a | finding<TAB>a b`). Comment lines (`#`) after the
/// file's first property line belong to the property below them.
fn parse_expected(text: &str) -> BTreeMap<String, Expected> {
    let mut out = BTreeMap::new();
    let (mut comments, mut seen_property) = (String::new(), false);
    for raw in text.lines() {
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with('#') {
            if seen_property {
                comments.push_str(l);
                comments.push('\n');
            }
            continue;
        }
        seen_property = true;
        let Some((id, rest)) = l.split_once('\t') else {
            continue;
        };
        let alternatives = rest
            .split('|')
            .filter_map(|alt| {
                let mut f = alt.split_whitespace();
                let status = f.next()?.to_string();
                let mut tags: Vec<String> = f.map(String::from).collect();
                tags.sort();
                Some((status, tags))
            })
            .collect();
        let text = format!("{}{l}\n", std::mem::take(&mut comments));
        out.insert(id.trim().to_string(), Expected { alternatives, text });
    }
    out
}

fn line_text((status, tags): &Line) -> String {
    if tags.is_empty() {
        status.clone()
    } else {
        format!("{status}\t{}", tags.join(" "))
    }
}

/// A finding's reproducer as the report describes it.
struct ReproRun {
    property: String,
    tag: String,
    path: PathBuf,
    ranks: u64,
    expect: Expect,
}

fn repros(props: &[Json]) -> Vec<ReproRun> {
    let mut out = Vec::new();
    for p in props {
        for f in p["findings"].as_array().into_iter().flatten() {
            let r = &f["repro"];
            let (Some(path), Some(expect)) = (r["path"].as_str(), r["expect"].as_str()) else {
                continue;
            };
            out.push(ReproRun {
                property: p["id"].as_str().unwrap_or("").into(),
                tag: f["tag"].as_str().unwrap_or("").into(),
                path: PathBuf::from(path),
                ranks: r["ranks"].as_u64().unwrap_or(1),
                expect: Expect::parse(expect).expect("a reproducer's expectation"),
            });
        }
    }
    out
}

/// Runs `cmd` for at most `limit`: the exit code (`None`: a signal) and what it printed.
fn run_limited(mut cmd: Command, limit: Duration) -> (Option<i32>, String) {
    let out = std::env::temp_dir().join(format!("mpit-repro-{}.out", std::process::id()));
    let file = std::fs::File::create(&out).expect("output file");
    cmd.stdin(Stdio::null())
        .stdout(file.try_clone().expect("dup"))
        .stderr(file);
    let mut child = cmd.spawn().expect("start the reproducer");
    let start = Instant::now();
    let status = loop {
        match child.try_wait().expect("wait") {
            Some(s) => break Some(s),
            None if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    match status {
        Some(s) => (s.code(), text),
        None => (Some(-1), format!("{text}\n(killed after {limit:?})")),
    }
}

/// Compiles and runs one reproducer with the selected MPI (`$MPICC`, `$MPIEXEC`); `Err` says
/// why it does not show the finding's behaviour.
fn check_repro(r: &ReproRun) -> Result<String, String> {
    let dir = r.path.parent().unwrap_or(Path::new("."));
    let stem = r
        .path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("repro");
    let exe = dir.join(stem);
    // The ABI build's reproducers are built for the ABI library, with its C compiler.
    let mpicc = if cfg!(mpit_abi) {
        std::env::var("MPIT_ABI_MPICC")
            .expect("MPIT_ABI_MPICC: the MPI ABI's C compiler (scripts/with-mpi abi:IMPL sets it)")
    } else {
        std::env::var("MPICC").unwrap_or_else(|_| mpit_safe::sys::BUILD_MPICC.to_owned())
    };
    let mut words = mpicc.split_whitespace();
    let build = Command::new(words.next().unwrap_or("mpicc"))
        .args(words)
        .arg(&r.path)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run {mpicc}: {e}"))?;
    if !build.status.success() {
        return Err(format!(
            "{mpicc} failed:\n{}",
            String::from_utf8_lossy(&build.stderr)
        ));
    }
    let mut cmd = if r.ranks > 1 {
        let words =
            mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
        let mut c = Command::new(&words[0]);
        c.args(&words[1..])
            .arg("-n")
            .arg(r.ranks.to_string())
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    // In the reproducers' directory: a crashing library may write files where it runs.
    cmd.current_dir(dir);
    let (code, text) = run_limited(cmd, Duration::from_secs(60));
    // What the program said last (a crash's backtrace left out).
    let said: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("mpit-repro:"))
        .collect();
    let tail = &said[said.len().saturating_sub(3)..];
    let shown = format!(
        "exit {} (expected {}): {}",
        code.map_or("by signal".into(), |c| c.to_string()),
        r.expect.describe(),
        tail.join(" | ")
    );
    if r.expect.shown_by(code) {
        Ok(shown)
    } else {
        Err(shown)
    }
}

#[test]
fn findings_match_the_expectation_file_and_reproduce_in_c() {
    let repro_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conform-repro");
    let _ = std::fs::remove_dir_all(&repro_dir);
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mpit-conform"))
        .arg("--json")
        .arg("--repro-dir")
        .arg(&repro_dir)
        .output()
        .expect("run mpit-conform");
    let elapsed = start.elapsed();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "mpit-conform printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    schema::assert_valid("mpit-conform", &report);
    let imp = &report["implementation"];
    let lib = imp["library_version"].as_str().unwrap_or("");
    let key = imp["key"]
        .as_str()
        .unwrap_or_else(|| panic!("no expectation key for library {lib:?}"));
    assert_eq!(
        build_key(implementation_key(
            imp["library_version_full"].as_str().unwrap_or("")
        )),
        Some(key)
    );
    let props = report["properties"].as_array().expect("properties");
    let got: BTreeMap<String, Line> = props
        .iter()
        .map(|p| {
            let mut tags: Vec<String> = p["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["tag"].as_str().map(String::from))
                .collect();
            tags.sort();
            (
                p["id"].as_str().unwrap_or("").to_string(),
                (p["status"].as_str().unwrap_or("").to_string(), tags),
            )
        })
        .collect();
    // The exit status says whether anything was found; every finding is graded.
    let findings = got.values().filter(|(s, _)| s == "finding").count();
    assert_eq!(report["findings"].as_u64(), Some(findings as u64));
    assert_eq!(out.status.code(), Some(i32::from(findings > 0)));
    for (id, (status, tags)) in &got {
        assert_eq!(
            status == "finding",
            !tags.is_empty(),
            "{id}: status {status} with findings {tags:?}"
        );
    }
    println!("{key}: {} properties in {elapsed:.1?}", got.len());
    assert!(
        elapsed.as_secs() < 150,
        "the conformance run took {elapsed:?}; it must stay well under 2.5 minutes"
    );
    // Material the implementation is known to have must have been looked at.
    let mut missing = Vec::new();
    for id in material_required(key) {
        match got.get(*id) {
            Some((s, _)) if s == "skip" => {
                let why = props
                    .iter()
                    .find(|p| p["id"] == *id)
                    .map(|p| p["detail"].to_string())
                    .unwrap_or_default();
                missing.push(format!("{id} skipped on {key}: {why}"));
            }
            None => missing.push(format!("{id} did not run on {key}")),
            _ => {}
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("expected")
        .join(format!("{key}.expected"));
    if std::env::var_os("MPIT_CONFORM_RECORD").is_some() {
        let mut text = format!(
            "# mpit-conform expectations for {key} ({lib});\n\
             # property<TAB>status<TAB>findings (kind/grade/rule-id; grades: violation, error-class, unchecked-input).\n\
             # Re-record: MPIT_CONFORM_RECORD=1 scripts/with-mpi {key} cargo test -p mpit-conformance --test integration conformance::\n"
        );
        // A line with alternatives (and its comment) stays as written while it still holds.
        let before = parse_expected(&std::fs::read_to_string(&path).unwrap_or_default());
        for (id, line) in &got {
            match before.get(id) {
                Some(e) if e.alternatives.len() > 1 && e.alternatives.contains(line) => {
                    text.push_str(&e.text)
                }
                _ => text.push_str(&format!("{id}\t{}\n", line_text(line))),
            }
        }
        std::fs::write(&path, text).expect("write the expectation file");
    } else {
        let expected = parse_expected(
            &std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display())),
        );
        let mut diff = Vec::new();
        for id in expected.keys().chain(got.keys()).collect::<BTreeSet<_>>() {
            let (e, g) = (expected.get(id), got.get(id));
            let holds = match (e, g) {
                (Some(e), Some(g)) => e.alternatives.contains(g),
                (e, g) => e.is_none() && g.is_none(),
            };
            if !holds {
                let detail = props
                    .iter()
                    .find(|p| p["id"] == id.as_str())
                    .map(|p| format!("{} {}", p["detail"], p["findings"]))
                    .unwrap_or_default();
                diff.push(format!(
                    "{id}: expected {}, got {}  {detail}",
                    e.map_or("(absent)".into(), |e| e
                        .alternatives
                        .iter()
                        .map(line_text)
                        .collect::<Vec<_>>()
                        .join(" | ")),
                    g.map_or("(absent)".into(), line_text)
                ));
            }
        }
        assert!(
            diff.is_empty(),
            "conformance findings changed for {key} ({}):\n{}",
            path.display(),
            diff.join("\n")
        );
    }
    // Every finding's C reproducer shows the same behaviour without Rust.
    let runs = repros(props);
    let with_findings: usize = props
        .iter()
        .map(|p| p["findings"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(
        runs.len(),
        with_findings,
        "every finding has a C reproducer"
    );
    let mut failed = Vec::new();
    for r in &runs {
        match check_repro(r) {
            Ok(shown) => println!("reproduced {} {}: {shown}", r.property, r.tag),
            Err(why) => failed.push(format!(
                "{} {} ({}): {why}",
                r.property,
                r.tag,
                r.path.display()
            )),
        }
    }
    assert!(
        failed.is_empty(),
        "reproducers that do not show their finding on {key}:\n{}",
        failed.join("\n")
    );
}

#[test]
fn expectation_lines_parse() {
    let e = parse_expected(
        "# comment\nerrors.handles\tfinding\tcrash/unchecked-input/000-1.2.9-error-codes \
         accepted/unchecked-input/000-1.2.9-error-codes\ninfo.stable\tpass\n",
    );
    assert_eq!(e.len(), 2);
    let [(status, tags)] = &e["errors.handles"].alternatives[..] else {
        panic!("one outcome expected: {e:?}");
    };
    assert_eq!(status, "finding");
    assert_eq!(
        tags,
        &[
            "accepted/unchecked-input/000-1.2.9-error-codes",
            "crash/unchecked-input/000-1.2.9-error-codes"
        ]
    );
    assert_eq!(line_text(&e["info.stable"].alternatives[0]), "pass");
    // Alternatives, and the comment above a property kept with it (not the file's header).
    let e = parse_expected(
        "# header\ninfo.stable\tpass\n# why\nerrors.index.pvar\tfinding\tcrash/u/r | \
         finding\tcrash/u/r accepted/u/r\n",
    );
    let alts = &e["errors.index.pvar"].alternatives;
    assert_eq!(alts.len(), 2);
    assert_eq!(line_text(&alts[0]), "finding\tcrash/u/r");
    assert_eq!(line_text(&alts[1]), "finding\taccepted/u/r crash/u/r");
    assert!(e["errors.index.pvar"].text.starts_with("# why\n"));
    assert_eq!(e["info.stable"].text, "info.stable\tpass\n");
    assert!(material_required("mpich-ev").contains(&"events.delivery"));
}

/// A launcher that starts no process is reported as such, not as a crash: one that fails
/// outright (`false`), and on Open MPI the real refusal of more processes than slots
/// (`--host localhost:1`, oversubscription off; MPICH's and Intel's hydra always oversubscribe).
#[test]
fn a_refusing_launcher_is_not_a_crash() {
    /// A launcher command and the environment to set (`Some`) or remove (`None`) for it.
    type Launcher = (String, Vec<(&'static str, Option<&'static str>)>);
    let mut launchers: Vec<Launcher> = vec![("false".into(), vec![])];
    if mpit_safe::implementation().vendor == mpit_safe::Vendor::OpenMpi {
        let program = mpit_safe::launcher()
            .expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)")
            .remove(0);
        launchers.push((
            format!("{program} --host localhost:1"),
            vec![
                ("OMPI_MCA_rmaps_base_oversubscribe", Some("0")),
                ("PRTE_MCA_rmaps_default_mapping_policy", None),
            ],
        ));
    }
    for (launcher, env) in launchers {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mpit-conform"));
        cmd.args(["--json", "--only", "ranks.consistency", "--repro-dir"])
            .arg(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conform-repro-refused"))
            .env("MPIEXEC", &launcher);
        for (k, v) in env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = cmd.output().expect("run mpit-conform");
        let report: Json = serde_json::from_slice(&out.stdout).expect("JSON");
        schema::assert_valid("mpit-conform", &report);
        let p = &report["properties"][0];
        println!("{launcher}: {}", p["detail"]);
        assert_eq!(p["id"], "ranks.consistency");
        assert_eq!(p["status"], "launcher-refused", "{launcher}: {p}");
        assert_eq!(p["findings"].as_array().map(Vec::len), Some(0));
        assert_eq!(out.status.code(), Some(0), "a refusal is no finding");
    }
}
