//! Property-based conformance tests of the installed MPI's MPI_T against the standard.
//!
//! Each [`Property`] states one rule of the standard, names the section it comes from (the
//! MPI-3.0 draft of the tool information interface for variables, sessions, categories and
//! strings, with the section of MPI-4.1 where the rule now lives; MPI-4.1 §16.3.8 for events) and
//! checks it with proptest over generated inputs (indices in and out of range, buffer lengths,
//! real and mutated names, random operation sequences) or, where the input space is small,
//! over all of it. Runs are deterministic (a fixed seed), so a finding is reproducible and the
//! report can be compared with a recorded one.
//!
//! Findings are graded ([`Finding`]): each names the [`Rule`] of the standard it departs from
//! (quoted, [`rules`]) and its [`Grade`]: a *violation* (the text requires it of a valid
//! call, a crash of a valid call included), an *error class* (an error other than the class the
//! text names), or *unchecked input* (an invalid argument accepted or crashing: MPI-4.1 §16.3.10
//! lets an implementation leave parameters unchecked, so this is a robustness note). Each
//! finding carries a standalone C [`Repro`] that makes the same calls without Rust and exits
//! with a status saying whether the behaviour showed ([`Report::write_repros`]).
//!
//! When a property looks is its [`Phase`]: the query properties about performance variables,
//! categories, sources and events look after `MPI_Init` (MPICH registers its pvars, sources and
//! events only there), the argument checks before and after it, the orderings and sweeps make
//! the initialisations themselves. A property that finds nothing to check says so (a skip with
//! the reason).
//!
//! Isolation: [`run`] executes every property in a child process (the program re-executed
//! with `--run-property ID`, see [`child_main`], under the harness of [`child`]), so a crash inside MPI is a finding naming the
//! call that caused it, not the end of the run. Sweeps over every variable resume after a crash
//! and avoid the variable that crashed, so one run finds every crashing variable. Cross-process
//! properties run under `mpiexec`; a launcher that starts no process is reported as
//! [`Status::LauncherRefused`], not as a crash.
//!
//! This crate uses `mpit-safe`'s public API, and `mpit-sys` for the raw probes that must pass
//! arguments the safe API cannot express (invalid indices, handles, buffer lengths).
//!
//! ```no_run
//! use mpit_conformance::{self as conformance, Config};
//! // In `main`: children run one property and exit.
//! conformance::child_main();
//! let report = conformance::run(&Config::default());
//! for o in &report.outcomes {
//!     println!("{} {}", o.id, o.status);
//!     for f in &o.findings {
//!         println!("  {} ({}) against {}: {}", f.kind, f.grade, f.rule.id, f.counterexample);
//!     }
//! }
//! report.write_repros(std::path::Path::new("repro")).unwrap();
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use mpit_sys as sys;
// rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

#[cfg(mpit_events)]
mod event_props;
#[cfg(mpit_events)]
mod events;
#[cfg(mpit_events)]
pub use events::{EventOp, RaiseAt, check_event_sequence, event_op};
pub mod child;
mod props;
mod raw;
pub mod repro;
pub mod rules;
mod sessions;

pub use repro::{Expect, Repro};
pub use rules::{Grade, Rule};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Config {
    /// Generated cases per proptest property (environment `MPIT_CONFORM_CASES`, default 64).
    pub cases: u32,
    /// Run only these property ids (empty: all).
    pub only: Vec<String>,
    /// The program to re-execute for each property: one whose `main` calls [`child_main`]
    /// first (default: the current executable).
    pub exe: PathBuf,
    /// The launcher for the cross-process properties, split on whitespace (environment
    /// `MPIEXEC`, default `mpiexec`).
    pub mpiexec: String,
    /// The test event provider to preload for the [`Isolation::Provider`] properties (`None`:
    /// they are skipped).
    pub event_provider: Option<PathBuf>,
    /// Wall-clock limit per child process.
    pub timeout: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            cases: std::env::var("MPIT_CONFORM_CASES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(64),
            only: Vec::new(),
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mpit-conform")),
            // The selected MPI's launcher ($MPIEXEC, else the one beside the build's mpicc),
            // never whatever `mpiexec` comes first on PATH.
            mpiexec: mpit_safe::launcher()
                .map(|w| w.join(" "))
                .unwrap_or_else(|| "mpiexec".into()),
            event_provider: None,
            timeout: Duration::from_secs(60),
        }
    }
}

/// How a property runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// In one child process (a singleton MPI process where `MPI_Init` is needed).
    Child,
    /// In one child process that resumes after a crash, avoiding what crashed.
    Sweep,
    /// In a job of this many processes started by `mpiexec` (resuming after a crash in a call
    /// that can be avoided).
    Ranks(u32),
    /// In one child process with the test event provider preloaded ([`Config::event_provider`];
    /// skipped without one).
    Provider,
}

/// When a property looks, relative to `MPI_Init`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// With MPI_T initialised, before `MPI_Init` (the rule is about that time).
    BeforeInit,
    /// With MPI_T initialised, after `MPI_Init`: where every implementation has registered
    /// what it has (MPICH registers its pvars, sources and events only in `MPI_Init`).
    AfterInit,
    /// The same check before `MPI_Init` and again after it (the rule holds at any time, and
    /// implementations check arguments differently before and after `MPI_Init`).
    Each,
    /// The property looks before `MPI_Init`, calls it, and looks again (the rule compares
    /// the two, or holds at both times).
    BeforeAndAfter,
    /// The property makes the initialisations itself, in the order its rule is about.
    Ordering,
}

impl Phase {
    /// `before MPI_Init`, `after MPI_Init`, `before and after MPI_Init`.
    pub fn describe(self) -> &'static str {
        match self {
            Phase::BeforeInit => "before MPI_Init",
            Phase::AfterInit => "after MPI_Init",
            Phase::Each | Phase::BeforeAndAfter => "before and after MPI_Init",
            Phase::Ordering => "its own ordering of MPI_T and MPI initialisation",
        }
    }
}

/// One rule of the standard, checked against the installed MPI.
#[derive(Debug, Clone, Copy)]
pub struct Property {
    /// Stable identifier (`--only ID`, expectation files).
    pub id: &'static str,
    /// Where the rule comes from.
    pub section: &'static str,
    /// The rule, in the standard's terms.
    pub rule: &'static str,
    /// How it runs.
    pub isolation: Isolation,
    /// When it looks.
    pub phase: Phase,
    check: fn(&Ctx) -> Verdict,
}

/// The result of one property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The implementation follows the rule on every input tried.
    Pass,
    /// It departs from the rule: see [`Outcome::findings`].
    Finding,
    /// The rule cannot be checked here (the reason says why).
    Skip {
        /// Why.
        reason: String,
    },
    /// The launcher refused to start the job (e.g. more processes than slots): no process of
    /// the property ran, so nothing is known about MPI_T.
    LauncherRefused {
        /// What the launcher said.
        reason: String,
    },
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Pass => "pass",
            Status::Finding => "finding",
            Status::Skip { .. } => "skip",
            Status::LauncherRefused { .. } => "launcher-refused",
        })
    }
}

/// One departure from one rule.
#[derive(Debug, Clone)]
pub struct Finding {
    /// What was observed: `crash`, `timeout`, `error` (an error returned: a wrong class, or an
    /// error where success is due), `accepted` (invalid input succeeded), `answer` (a wrong
    /// value, length or description), `holes`.
    pub kind: String,
    /// How serious it is.
    pub grade: Grade,
    /// The rule it departs from.
    pub rule: &'static Rule,
    /// The minimal input that shows it (shrunk by proptest), or the call that crashed.
    pub counterexample: String,
    /// What was observed.
    pub detail: String,
    /// A standalone C program that shows the same behaviour.
    pub repro: Option<Repro>,
}

impl Finding {
    /// `kind/grade/rule-id`: what the expectation files pin.
    pub fn tag(&self) -> String {
        format!("{}/{}/{}", self.kind, self.grade, self.rule.id)
    }
}

/// A property's outcome in a report.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// [`Property::id`].
    pub id: &'static str,
    /// [`Property::section`].
    pub section: &'static str,
    /// [`Property::rule`].
    pub rule: &'static str,
    /// [`Property::phase`].
    pub phase: Phase,
    /// Pass, finding, skip or launcher refusal.
    pub status: Status,
    /// The departures found, one per (kind, grade, rule), most serious first.
    pub findings: Vec<Finding>,
    /// What a pass covered, or why it was skipped or refused.
    pub detail: String,
    /// Wall-clock seconds the property took, child processes included.
    pub seconds: f64,
}

/// The implementation a report is about.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// Vendor and version, from the library ([`mpit_safe::implementation()`]).
    pub library: mpit_core::Implementation,
    /// The first line of `MPI_Get_library_version`.
    pub library_version: String,
    /// All of `MPI_Get_library_version` (MPICH's includes its configure options).
    pub library_version_full: String,
    /// The expectation key ([`implementation_key`]), if the library is one this project knows.
    pub key: Option<&'static str>,
    /// `MPI_Get_version`: the MPI standard version the library supports.
    pub mpi_version: (i32, i32),
}

/// The key of the expectation file and reproducer directory for a library, from all of its
/// `MPI_Get_library_version`: `mpich` (MPICH 4), `mpich-ev` (MPICH 4 configured with
/// `--enable-mpit-events`), `mpich5`, `openmpi` (Open MPI 4), `openmpi5`, `intel`.
pub fn implementation_key(library_version: &str) -> Option<&'static str> {
    use mpit_core::Vendor;
    let imp = mpit_core::Implementation::from_library_version(library_version)?;
    // MPICH prints its configure line; events are on unless the option says otherwise.
    let events =
        mpit_core::implementation::configure_option(library_version, "--enable-mpit-events")
            .is_some_and(|v| !matches!(v, "no" | "none"));
    match (imp.vendor, imp.version.major) {
        (Vendor::Intel, _) => Some("intel"),
        (Vendor::Mpich, 4) if events => Some("mpich-ev"),
        (Vendor::Mpich, 4) => Some("mpich"),
        (Vendor::Mpich, 5) => Some("mpich5"),
        (Vendor::OpenMpi, 4) => Some("openmpi"),
        (Vendor::OpenMpi, 5) => Some("openmpi5"),
        _ => None,
    }
}

/// The key of this build's library: the native one's, or in the ABI build (`--cfg mpit_abi`)
/// `mpich5-abi` and `intel-abi`: the ABI library translates every handle and constant, and
/// its findings are its own (MPICH 5.0.2's crashes on `MPI_T_PVAR_ALL_HANDLES`).
pub fn build_key(native: Option<&'static str>) -> Option<&'static str> {
    if cfg!(mpit_abi) {
        match native? {
            "mpich5" => Some("mpich5-abi"),
            "intel" => Some("intel-abi"),
            _ => None,
        }
    } else {
        native
    }
}

/// Everything one run found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The implementation.
    pub implementation: Implementation,
    /// Generated cases per proptest property.
    pub cases: u32,
    /// One outcome per property run, in the order of [`properties`].
    pub outcomes: Vec<Outcome>,
}

impl Report {
    /// How many properties produced a finding.
    pub fn findings(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.status == Status::Finding)
            .count()
    }

    /// Writes one C reproducer per finding that has one into `dir` (created), named
    /// `repro_<property>_<n>.c` with the property's dots as underscores; returns, per finding
    /// in report order, the file's path (`None`: the finding has no reproducer).
    pub fn write_repros(&self, dir: &std::path::Path) -> std::io::Result<Vec<Option<PathBuf>>> {
        std::fs::create_dir_all(dir)?;
        let mut out = Vec::new();
        for o in &self.outcomes {
            for (n, f) in o.findings.iter().enumerate() {
                let Some(r) = &f.repro else {
                    out.push(None);
                    continue;
                };
                let name = repro_name(o.id, n);
                let i = &self.implementation;
                let header = [
                    format!(
                        "mpit-conform reproducer: property {} on {} ({})",
                        o.id, i.library, i.library_version
                    ),
                    format!("Finding: {} ({}): {}", f.kind, f.grade, f.counterexample),
                    format!("Observed: {}", f.detail),
                    format!("Rule {}: {}", f.rule.id, f.rule),
                    format!("Grade {}: {}", f.grade, f.grade.basis()),
                ];
                let path = dir.join(format!("{name}.c"));
                std::fs::write(&path, r.render(&name, &header))?;
                out.push(Some(path));
            }
        }
        Ok(out)
    }
}

/// The file stem of the reproducer of finding `n` of property `id`.
pub fn repro_name(id: &str, n: usize) -> String {
    format!("repro_{}_{n}", id.replace(['.', '-'], "_"))
}

/// A departure found inside a child process.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) kind: &'static str,
    pub(crate) grade: Grade,
    pub(crate) rule: &'static Rule,
    pub(crate) counterexample: String,
    pub(crate) detail: String,
    pub(crate) repro: Option<Repro>,
}

impl Found {
    pub(crate) fn new(
        kind: &'static str,
        grade: Grade,
        rule: &'static Rule,
        counterexample: impl Into<String>,
        detail: impl Into<String>,
    ) -> Found {
        Found {
            kind,
            grade,
            rule,
            counterexample: counterexample.into(),
            detail: detail.into(),
            repro: None,
        }
    }

    /// A problem a property collects ([`from_problems`]): its text is the counterexample.
    pub(crate) fn problem(
        kind: &'static str,
        grade: Grade,
        rule: &'static Rule,
        text: impl Into<String>,
    ) -> Found {
        Found::new(kind, grade, rule, text, String::new())
    }

    pub(crate) fn with_repro(mut self, repro: impl Into<Option<Repro>>) -> Found {
        self.repro = repro.into();
        self
    }
}

/// What a property concluded, inside its process.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    /// Passed; the note says what was covered.
    Pass(String),
    /// Departures (at least one).
    Found(Vec<Found>),
    Skip(String),
}

impl Verdict {
    /// Adds `note` (what was covered) to a pass; other verdicts are unchanged.
    pub(crate) fn noting(self, note: impl std::fmt::Display) -> Verdict {
        match self {
            Verdict::Pass(n) if n.is_empty() => Verdict::Pass(note.to_string()),
            Verdict::Pass(n) => Verdict::Pass(format!("{note}; {n}")),
            v => v,
        }
    }

    /// One finding.
    pub(crate) fn found(f: Found) -> Verdict {
        Verdict::Found(vec![f])
    }

    /// The findings of several checks of one property together (passes and skips dropped
    /// when anything was found; otherwise the first skip, else a pass with every note).
    pub(crate) fn all(verdicts: Vec<Verdict>) -> Verdict {
        let mut found = Vec::new();
        let mut notes = Vec::new();
        let mut skip = None;
        for v in verdicts {
            match v {
                Verdict::Found(f) => found.extend(f),
                Verdict::Pass(n) if !n.is_empty() => notes.push(n),
                Verdict::Pass(_) => {}
                Verdict::Skip(r) => {
                    skip.get_or_insert(r);
                }
            }
        }
        match (found.is_empty(), skip) {
            (false, _) => Verdict::Found(found),
            (true, Some(r)) if notes.is_empty() => Verdict::Skip(r),
            (true, Some(r)) => Verdict::Pass(format!("{}; {r}", notes.join("; "))),
            (true, None) => Verdict::Pass(notes.join("; ")),
        }
    }
}

/// What a property sees in its process.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub(crate) cases: u32,
    /// Calls to avoid: the keys of calls that crashed an earlier attempt of this sweep, and
    /// the variables earlier sweeps found crashing (`cvar:NAME`, `pvar:NAME`).
    pub(crate) avoid: Vec<String>,
    /// Whether the harness called `MPI_Init` before the property ([`Phase::AfterInit`]).
    pub(crate) after_init: bool,
}

impl Ctx {
    pub(crate) fn avoids(&self, key: &str) -> bool {
        self.avoid.iter().any(|a| a == key)
    }
}

const CALL: &str = "@@call ";
const CRASH: &str = "@@crash ";
const CASE: &str = "@@case ";
const STARTED: &str = "@@started";
const FOUND: &str = "@@finding ";
const REPLAY_ENV: &str = "MPIT_CONFORM_REPLAY";
/// Set in every child, so a child whose `main` forgot `child_main` cannot recurse.
const CHILD_ENV: &str = "MPIT_CONFORM_CHILD";
const RESULT: &str = "@@result ";
const ARG: &str = "--run-property";
const AVOID_ENV: &str = "MPIT_CONFORM_AVOID";
const CASES_ENV: &str = "MPIT_CONFORM_CASES";

/// Announces the MPI call a child is about to make: if the process dies in it, the parent
/// reports this text as the call that crashed (and `key`, if given, is avoided on resume),
/// graded as a violation of [`rules::RETURNS`] (a valid call).
pub(crate) fn announce(key: Option<&str>, text: &str) {
    announce_with(key, text, Grade::Violation, &rules::RETURNS, None);
}

/// [`announce`], saying how a crash in the call is graded, which rule it departs from, and
/// the C program that shows it.
pub(crate) fn announce_with(
    key: Option<&str>,
    text: &str,
    grade: Grade,
    rule: &'static Rule,
    repro: Option<Repro>,
) {
    let repro = repro.map(|r| escape(&r.encode())).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{CALL}{}\t{}\n{CRASH}{grade}\t{}\t{repro}",
        key.unwrap_or(""),
        text.replace(['\n', '\t'], " "),
        rule.id
    );
    let _ = out.flush();
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every property, in the order they run (the sweeps first: what they find crashing is
/// avoided by the properties after them).
pub fn properties() -> &'static [Property] {
    props::ALL
}

/// The entry point of a child: if the command line is `--run-property ID`, runs that
/// property, prints its result for the parent and exits; otherwise returns.
pub fn child_main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(pos) = args.iter().position(|a| a == ARG) else {
        return;
    };
    {
        // Before anything else: the parent tells a launcher's refusal from a crash by it.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{STARTED}");
        let _ = out.flush();
    }
    let id = args.get(pos + 1).cloned().unwrap_or_default();
    let mut ctx = Ctx {
        cases: std::env::var(CASES_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64),
        avoid: std::env::var(AVOID_ENV)
            .map(|s| {
                s.split('\u{1f}')
                    .filter(|x| !x.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default(),
        after_init: false,
    };
    let verdict = match properties().iter().find(|p| p.id == id) {
        Some(p) => run_in_phase(p, &mut ctx),
        None => Verdict::Skip(format!("no property {id}")),
    };
    // Ranks other than 0 of a cross-process property print nothing.
    if let Some(lines) = verdict_lines(&verdict) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{lines}");
        let _ = out.flush();
    }
    // Exit without running destructors or MPI_T_finalize: the ordering crashes of
    // finalization are a property of their own (`tests/ordering.rs`), not of
    // each property. MPI_Finalize ran if the harness or the property initialised MPI (rsmpi's
    // universe dropped), so mpiexec sees a clean end.
    std::process::exit(0);
}

/// Initialises what the property's phase needs, runs it, and finalises MPI if it was
/// initialised here.
fn run_in_phase(p: &Property, ctx: &mut Ctx) -> Verdict {
    if matches!(p.phase, Phase::BeforeAndAfter | Phase::Ordering) {
        return (p.check)(ctx);
    }
    if let Err(e) = raw::init() {
        return Verdict::Skip(format!("MPI_T_init_thread failed: {e}"));
    }
    let before = match p.phase {
        Phase::BeforeInit => return (p.check)(ctx),
        Phase::Each => Some((p.check)(ctx)),
        _ => None,
    };
    announce(None, &format!("MPI_Init (before the property {})", p.id));
    let universe = mpi::initialize();
    ctx.after_init = true;
    let after = (p.check)(ctx);
    drop(universe);
    match before {
        None => after,
        Some(before) => Verdict::all(vec![
            before.noting("before MPI_Init"),
            after.noting("after MPI_Init"),
        ]),
    }
}

/// The result lines of a verdict (`None`: print nothing).
fn verdict_lines(v: &Verdict) -> Option<String> {
    Some(match v {
        Verdict::Pass(note) => format!("{RESULT}pass\t{}", escape(note)),
        Verdict::Skip(r) if r == props::SILENT => return None,
        Verdict::Skip(r) => format!("{RESULT}skip\t{}", escape(r)),
        Verdict::Found(found) => {
            let mut s = String::new();
            for f in found {
                s.push_str(&format!(
                    "{FOUND}{}\t{}\t{}\t{}\t{}\t{}\n",
                    f.kind,
                    f.grade,
                    f.rule.id,
                    escape(&f.counterexample),
                    escape(&f.detail),
                    f.repro
                        .as_ref()
                        .map(|r| escape(&r.encode()))
                        .unwrap_or_default()
                ));
            }
            s.push_str(RESULT);
            s.push_str("finding");
            s
        }
    })
}

/// The call a child announced last, and what a crash in it means.
#[derive(Debug, Clone)]
struct Call {
    key: String,
    text: String,
    grade: Grade,
    rule: &'static Rule,
    repro: Option<Repro>,
}

/// What one child process produced.
struct ChildRun {
    result: Option<Verdict>,
    /// The last `@@case CASE STEP` announced.
    last_case: Option<(u32, usize)>,
    last_call: Option<Call>,
    exit: String,
    crashed: bool,
    /// Whether any process of the property started (printed `@@started`).
    started: bool,
    timed_out: bool,
}

/// The directory children run in: what a crashing library writes into its working directory
/// (libpsm2's `*.btr` backtraces) lands there, not in the user's.
fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("mpit-conform-cwd-{}", std::process::id()))
}

fn run_child(cfg: &Config, p: &Property, avoid: &[String], replay: Option<&str>) -> ChildRun {
    let mut cmd = match p.isolation {
        Isolation::Ranks(n) => {
            let mut words = cfg.mpiexec.split_whitespace();
            let mut c = Command::new(words.next().unwrap_or("mpiexec"));
            c.args(words).arg("-n").arg(n.to_string()).arg(&cfg.exe);
            c
        }
        _ => Command::new(&cfg.exe),
    };
    cmd.arg(ARG)
        .arg(p.id)
        .env(CASES_ENV, cfg.cases.to_string())
        .env(AVOID_ENV, avoid.join("\u{1f}"))
        .env("MPIT_CONFORM_JOB", std::process::id().to_string())
        .env(REPLAY_ENV, replay.unwrap_or(""))
        .env(CHILD_ENV, "1")
        .current_dir(scratch_dir());
    let mut run = ChildRun {
        result: None,
        last_case: None,
        last_call: None,
        exit: String::new(),
        crashed: false,
        started: false,
        timed_out: false,
    };
    if p.isolation == Isolation::Provider {
        match &cfg.event_provider {
            Some(provider) => {
                cmd.env("LD_PRELOAD", provider);
            }
            None => {
                run.result = Some(Verdict::Skip(
                    "no test event provider (built only where the header has the MPI-4 event \
                     API)"
                        .into(),
                ));
                return run;
            }
        }
    }
    let ran = match child::run::<Parsed, LastLines>(&mut cmd, cfg.timeout) {
        Ok(r) => r,
        Err(e) => {
            run.result = Some(Verdict::Skip(format!("cannot start {:?}: {e}", cfg.exe)));
            return run;
        }
    };
    // Only what the parent needs was kept (a sweep announces thousands of calls).
    let parsed = ran.stdout;
    run.result = parsed.result;
    run.last_case = parsed.last_case;
    run.last_call = parsed.last_call;
    run.started = parsed.started;
    run.timed_out = matches!(ran.ended, child::Ended::Timeout(_));
    run.exit = describe_exit(ran.ended, cfg.timeout);
    let last_err = ran.stderr.0;
    run.crashed = !ran.ended.success() || run.result.is_none();
    if ran.ended.code().is_some() && !last_err.is_empty() {
        // An exit code, not a signal: what the library (or the launcher) said before exiting
        // (a launcher that started nothing: its last lines, where it says why).
        let lines = if run.started { 1 } else { last_err.len() };
        let said: Vec<&str> = last_err
            .iter()
            .rev()
            .take(lines)
            .rev()
            .map(String::as_str)
            .collect();
        let shown: String = said
            .join(" ")
            .chars()
            .filter(|c| !c.is_control())
            .take(600)
            .collect();
        run.exit = format!("{} (stderr: {shown})", run.exit);
    }
    run
}

/// The last lines a child (or the launcher) wrote to stderr, without rules of dashes: kept
/// for the report of a crash (an assertion, an MPI error message).
#[derive(Default)]
struct LastLines(VecDeque<String>);

impl child::Lines for LastLines {
    fn line(&mut self, l: &str) {
        let t = l.trim();
        if !t.is_empty() && !t.chars().all(|c| c == '-' || c == '=') {
            if self.0.len() == 8 {
                self.0.pop_front();
            }
            self.0.push_back(t.to_string());
        }
    }
}

/// The protocol lines of a child, as they arrive.
#[derive(Default)]
struct Parsed {
    result: Option<Verdict>,
    found: Vec<Found>,
    last_case: Option<(u32, usize)>,
    last_call: Option<Call>,
    started: bool,
}

impl child::Lines for Parsed {
    fn line(&mut self, l: &str) {
        if let Some(c) = l.strip_prefix(CALL) {
            let (key, text) = c.split_once('\t').unwrap_or(("", c));
            self.last_call = Some(Call {
                key: key.to_string(),
                text: text.to_string(),
                grade: Grade::Violation,
                rule: &rules::RETURNS,
                repro: None,
            });
        } else if let Some(c) = l.strip_prefix(CRASH) {
            let f: Vec<&str> = c.splitn(3, '\t').collect();
            if let (Some(call), [grade, rule, repro]) = (&mut self.last_call, &f[..]) {
                call.grade = Grade::parse(grade).unwrap_or(Grade::Violation);
                call.rule = rules::by_id(rule).unwrap_or(&rules::RETURNS);
                call.repro = Repro::decode(&unescape(repro));
            }
        } else if let Some(c) = l.strip_prefix(CASE) {
            self.last_case = c
                .split_once('\t')
                .and_then(|(k, s)| Some((k.parse().ok()?, s.parse().ok()?)));
        } else if let Some(f) = l.strip_prefix(FOUND) {
            self.found.extend(parse_found(f));
        } else if let Some(r) = l.strip_prefix(RESULT) {
            self.result = Some(match parse_verdict(r) {
                Verdict::Found(_) => Verdict::Found(std::mem::take(&mut self.found)),
                v => v,
            });
        } else if l == STARTED {
            self.started = true;
        }
    }
}

/// How a child ended, for the report: `SIGSEGV (11)`, `exit code 1`, `killed after 60 s
/// (timeout)`.
fn describe_exit(ended: child::Ended, timeout: Duration) -> String {
    match ended {
        child::Ended::Signal { signal, .. } => {
            format!(
                "{} ({signal})",
                child::signal_name(signal).unwrap_or("signal")
            )
        }
        child::Ended::Exit(c) => format!("exit code {c}"),
        child::Ended::Timeout(_) => format!("killed after {} s (timeout)", timeout.as_secs()),
    }
}

/// The kinds of [`Finding::kind`], as static strings.
const KINDS: &[&str] = &["crash", "timeout", "error", "accepted", "answer", "holes"];

fn parse_found(f: &str) -> Option<Found> {
    let v: Vec<&str> = f.split('\t').collect();
    let [kind, grade, rule, cex, detail, repro] = v[..] else {
        return None;
    };
    Some(Found {
        kind: KINDS
            .iter()
            .find(|k| **k == kind)
            .copied()
            .unwrap_or("answer"),
        grade: Grade::parse(grade)?,
        rule: rules::by_id(rule)?,
        counterexample: unescape(cex),
        detail: unescape(detail),
        repro: Repro::decode(&unescape(repro)),
    })
}

fn parse_verdict(r: &str) -> Verdict {
    let f: Vec<&str> = r.split('\t').collect();
    match f[..] {
        ["pass"] => Verdict::Pass(String::new()),
        ["pass", note] => Verdict::Pass(unescape(note)),
        ["skip", reason] => Verdict::Skip(unescape(reason)),
        ["finding"] => Verdict::Found(Vec::new()),
        _ => Verdict::Skip(format!("unreadable result line {r:?}")),
    }
}

/// The finding of a child that died in (or after) its last announced call.
fn crash_found(run: &ChildRun) -> Found {
    let call = run.last_call.clone().unwrap_or(Call {
        key: String::new(),
        text: "(no call announced)".into(),
        grade: Grade::Violation,
        rule: &rules::RETURNS,
        repro: None,
    });
    let text = if run.result.is_some() {
        // The property finished and reported; the process died afterwards.
        format!("{} at process exit, after {}", run.exit, call.text)
    } else {
        format!("{} in {}", run.exit, call.text)
    };
    let kind = if run.timed_out { "timeout" } else { "crash" };
    Found::new(kind, call.grade, call.rule, call.text, text).with_repro(call.repro)
}

/// Runs one property in child processes (resuming after crashes in calls that can be
/// avoided, shrinking crashes of generated inputs).
fn run_property(cfg: &Config, p: &Property, avoid_vars: &mut Vec<String>) -> Outcome {
    let start = Instant::now();
    let mut avoid = avoid_vars.clone();
    let mut crashes: Vec<Found> = Vec::new();
    // A sweep resumes after every crash; other properties after a few (each resume starts
    // MPI again, which takes a second on Open MPI 5).
    let max_resumes = if p.isolation == Isolation::Sweep {
        40
    } else {
        3
    };
    // Crash shrinking of generated inputs (see `check_prop`), per round of generated checks:
    // the case that crashed, the shrink steps that crashed, and what each crash was.
    let mut shrinks: BTreeMap<u32, Shrink> = BTreeMap::new();
    const SHRINK_BUDGET: usize = 12;
    let outcome = |status: Status, findings: Vec<Found>, detail: String| Outcome {
        id: p.id,
        section: p.section,
        rule: p.rule,
        phase: p.phase,
        status,
        findings: grouped(findings),
        detail,
        seconds: start.elapsed().as_secs_f64(),
    };
    let verdict = loop {
        let arg: Vec<String> = shrinks
            .iter()
            .map(|(round, s)| {
                let steps: Vec<String> = s.steps.iter().map(ToString::to_string).collect();
                let last = if s.crash.len() >= SHRINK_BUDGET {
                    ";last"
                } else {
                    ""
                };
                format!("{};{}{last}", round * ROUND_SPAN + s.case, steps.join(","))
            })
            .collect();
        let run = run_child(cfg, p, &avoid, Some(&arg.join("|")));
        if !run.crashed {
            break run.result;
        }
        if matches!(p.isolation, Isolation::Ranks(_)) && !run.started && !run.timed_out {
            return outcome(
                Status::LauncherRefused {
                    reason: run.exit.clone(),
                },
                Vec::new(),
                format!("the launcher started no process: {}", run.exit),
            );
        }
        let found = crash_found(&run);
        if let (false, Some((id, step))) = (p.isolation == Isolation::Sweep, run.last_case) {
            let (round, case) = (id / ROUND_SPAN, id % ROUND_SPAN);
            let s = shrinks.entry(round).or_insert(Shrink {
                case,
                steps: Vec::new(),
                crash: BTreeMap::new(),
            });
            if s.case == case && s.crash.len() < SHRINK_BUDGET + 2 {
                s.crash.insert(step, found);
                if step > 0 {
                    s.steps.push(step);
                }
                continue;
            }
        }
        crashes.push(found);
        match run.last_call {
            Some(Call { key, .. }) if !key.is_empty() && crashes.len() <= max_resumes => {
                avoid.push(key.clone());
                if key.starts_with("cvar:") || key.starts_with("pvar:") {
                    avoid_vars.push(key);
                }
            }
            _ => break None,
        }
    };
    let mut findings = crashes;
    // The crash a round's shrinking ended at (the child reports it as `ROUND:STEP`).
    let shrunk = |f: &Found| -> Option<Found> {
        let (round, step) = f.detail.split_once(':')?;
        let s = shrinks.get(&round.parse().ok()?)?;
        let c = s.crash.get(&step.parse().ok()?)?;
        Some(Found {
            counterexample: f.counterexample.clone(),
            detail: format!(
                "{} (minimal crashing input, shrunk over {} re-executions)",
                c.detail,
                s.crash.len()
            ),
            ..c.clone()
        })
    };
    let unfinished = || -> Vec<Found> {
        shrinks
            .values()
            .filter_map(|s| s.crash.values().next().cloned())
            .collect()
    };
    let (status, detail) = match verdict {
        Some(Verdict::Pass(note)) if findings.is_empty() && shrinks.is_empty() => {
            (Status::Pass, note)
        }
        Some(Verdict::Skip(r)) if findings.is_empty() && shrinks.is_empty() => {
            (Status::Skip { reason: r.clone() }, r)
        }
        Some(Verdict::Found(found)) => {
            for f in found {
                match (f.kind, shrunk(&f)) {
                    ("crash", Some(c)) => findings.push(c),
                    ("crash", None) => findings.extend(unfinished()),
                    _ => findings.push(f),
                }
            }
            (Status::Finding, String::new())
        }
        None if findings.is_empty() && shrinks.is_empty() => {
            findings.push(Found::new(
                "crash",
                Grade::Violation,
                &rules::RETURNS,
                "",
                "no result",
            ));
            (Status::Finding, String::new())
        }
        other => {
            findings.extend(unfinished());
            let note = match other {
                Some(Verdict::Pass(n) | Verdict::Skip(n)) => format!("after resuming: {n}"),
                _ => String::new(),
            };
            (Status::Finding, note)
        }
    };
    outcome(status, findings, detail)
}

/// The crash shrinking of one round of generated checks in the parent.
struct Shrink {
    case: u32,
    steps: Vec<usize>,
    crash: BTreeMap<usize, Found>,
}

/// One [`Finding`] per (kind, grade, rule), in order of grade: the first departure's
/// counterexample and reproducer, the others in the detail.
fn grouped(found: Vec<Found>) -> Vec<Finding> {
    let mut groups: Vec<(Found, usize, Vec<String>)> = Vec::new();
    for f in found {
        match groups
            .iter_mut()
            .find(|(g, ..)| g.kind == f.kind && g.grade == f.grade && g.rule.id == f.rule.id)
        {
            Some((g, n, more)) => {
                *n += 1;
                if more.len() < 4 {
                    more.push(if f.detail.contains(&f.counterexample) {
                        f.detail.clone()
                    } else {
                        format!("{} ({})", f.detail, f.counterexample)
                    });
                }
                // Crashes found one after the other (a sweep resuming): the last reproducer
                // makes the calls of the earlier ones too.
                if f.kind == "crash" && f.repro.is_some() {
                    g.repro = f.repro;
                }
            }
            None => groups.push((f, 1, Vec::new())),
        }
    }
    groups.sort_by_key(|(f, ..)| f.grade);
    groups
        .into_iter()
        .map(|(f, n, more)| Finding {
            kind: f.kind.to_string(),
            grade: f.grade,
            rule: f.rule,
            counterexample: f.counterexample,
            detail: if n == 1 {
                f.detail
            } else {
                format!("{} (and {} more: {})", f.detail, n - 1, more.join("; "))
            },
            repro: f.repro,
        })
        .collect()
}

/// The implementation, from `MPI_Get_library_version` (callable before `MPI_Init`).
pub fn implementation() -> Implementation {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: callable at any time, before MPI_Init too; valid out-pointers.
    unsafe { sys::MPI_Get_version(&mut major, &mut minor) };
    let full = mpit_safe::quirks::library_version().unwrap_or_default();
    let full = full.trim_end_matches('\0').to_string();
    Implementation {
        library: mpit_safe::implementation(),
        library_version: full.lines().next().unwrap_or("").trim().to_string(),
        key: build_key(implementation_key(&full)),
        library_version_full: full,
        mpi_version: (major, minor),
    }
}

/// Runs every property (or those of `cfg.only`) in child processes and reports.
///
/// The children are `cfg.exe` re-executed with `--run-property ID`: its `main` must call
/// [`child_main`] first. If it does not, a child would call `run` again; that is detected
/// (every property is then skipped with a message saying so) instead of recursing.
pub fn run(cfg: &Config) -> Report {
    if std::env::var_os(CHILD_ENV).is_some() {
        let reason = "conformance::run called in a child: call child_main first";
        let outcomes = properties()
            .iter()
            .map(|p| Outcome {
                id: p.id,
                section: p.section,
                rule: p.rule,
                phase: p.phase,
                status: Status::Skip {
                    reason: reason.into(),
                },
                findings: Vec::new(),
                detail: reason.into(),
                seconds: 0.0,
            })
            .collect();
        return Report {
            implementation: implementation(),
            cases: cfg.cases,
            outcomes,
        };
    }
    let mut avoid_vars = Vec::new();
    let scratch = scratch_dir();
    let _ = std::fs::create_dir_all(&scratch);
    let outcomes = properties()
        .iter()
        .filter(|p| cfg.only.is_empty() || cfg.only.iter().any(|o| o == p.id))
        .map(|p| run_property(cfg, p, &mut avoid_vars))
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    Report {
        implementation: implementation(),
        cases: cfg.cases,
        outcomes,
    }
}

/// How the failing case a test body is about to report is graded (set by [`failing`]).
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) kind: &'static str,
    pub(crate) grade: Grade,
    pub(crate) rule: &'static Rule,
    pub(crate) repro: Option<Repro>,
}

thread_local! {
    static FAILURE: std::cell::RefCell<Option<Failure>> = const { std::cell::RefCell::new(None) };
}

/// Grades the failure a test body of [`check_prop`] returns next (without it: an `answer` that
/// is a violation of the property's rule).
pub(crate) fn failing(kind: &'static str, grade: Grade, rule: &'static Rule, repro: Option<Repro>) {
    FAILURE.with(|f| {
        *f.borrow_mut() = Some(Failure {
            kind,
            grade,
            rule,
            repro,
        })
    });
}

/// Runs `test` over `strategy` with a fixed seed and `cases` cases; a failure is shrunk and
/// reported with the minimal input, graded as the test body said ([`failing`]) or as an
/// `answer` violating `rule`.
///
/// Crashes are shrunk too, across processes: before each case and each shrink step the child
/// announces `@@case CASE STEP`; when it dies, the parent re-executes it with
/// `MPIT_CONFORM_REPLAY=CASE;STEPS` (the steps that crashed so far), and the child replays the
/// same deterministic generation and shrinking, taking those steps as failures without running
/// them. The last crashing step is the minimal crashing input.
pub(crate) fn check_prop<S>(
    cases: u32,
    rule: &'static Rule,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) -> Verdict
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    // A property may run several generated checks one after the other (rounds); case ids
    // announced to the parent carry the round, so a replay applies to its own round only.
    static ROUND: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let round = ROUND.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // One entry per round that crashed: `ID;STEPS[;last]`, entries separated by `|`.
    let replay: Option<Replay> = std::env::var(REPLAY_ENV).ok().and_then(|r| {
        r.split('|').find_map(|entry| {
            let mut f = entry.split(';');
            let id: u32 = f.next()?.parse().ok()?;
            let crashed = f
                .next()?
                .split(',')
                .filter_map(|x| x.parse().ok())
                .collect();
            let last = f.next() == Some("last");
            (id / ROUND_SPAN == round).then_some(Replay {
                case: id % ROUND_SPAN,
                crashed,
                last,
            })
        })
    });
    check_prop_replaying(cases, rule, strategy, test, replay, round)
}

/// What a re-executed child replays: the case that crashed, the shrink steps that crashed,
/// and whether to stop shrinking there (`last`: the parent's budget of re-executions is spent;
/// steps after the last known crash count as passing without being run).
#[derive(Debug, Clone, Default)]
struct Replay {
    case: u32,
    crashed: Vec<usize>,
    last: bool,
}

/// Case ids announced to the parent are `round * ROUND_SPAN + case`.
const ROUND_SPAN: u32 = 1_000_000;

/// [`check_prop`] with the replay (case, crashed steps) given.
fn check_prop_replaying<S>(
    cases: u32,
    rule: &'static Rule,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
    replay: Option<Replay>,
    round: u32,
) -> Verdict
where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let config = PtConfig {
        cases,
        failure_persistence: None,
        ..PtConfig::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    // `None`: passed (or rejected); `Some(None)`: crashed (replayed); `Some(Some(r))`: failed.
    let outcome = |case: u32, step: usize, value: S::Value| -> Option<Option<(String, Failure)>> {
        match &replay {
            Some(r) if r.case == case && (step == 0 || r.crashed.contains(&step)) => {
                return Some(None);
            }
            // Past the last known crash, with the budget spent: count as passing, unrun.
            Some(r) if r.case == case && r.last && r.crashed.iter().all(|&c| step > c) => {
                return None;
            }
            _ => {}
        }
        // println! (not a locked handle): the test harness captures it.
        println!("{CASE}{}\t{step}", round * ROUND_SPAN + case);
        let _ = std::io::stdout().flush();
        FAILURE.with(|f| f.borrow_mut().take());
        let result = test(value);
        let graded = FAILURE.with(|f| f.borrow_mut().take());
        match result {
            Err(TestCaseError::Fail(r)) => Some(Some((
                r.to_string(),
                graded.unwrap_or(Failure {
                    kind: "answer",
                    grade: Grade::Violation,
                    rule,
                    repro: None,
                }),
            ))),
            _ => None,
        }
    };
    for case in 0..cases {
        let mut tree = match strategy.new_tree(&mut runner) {
            Ok(t) => t,
            Err(r) => return Verdict::Skip(format!("no input generated: {r}")),
        };
        if replay.as_ref().is_some_and(|r| case < r.case) {
            continue;
        }
        let Some(mut reason) = outcome(case, 0, tree.current()) else {
            continue;
        };
        let (mut value, mut at) = (format!("{:?}", tree.current()), 0);
        let mut step = 0;
        if tree.simplify() {
            while step < 256 {
                step += 1;
                match outcome(case, step, tree.current()) {
                    Some(r) => {
                        (reason, value, at) = (r, format!("{:?}", tree.current()), step);
                        if !tree.simplify() {
                            break;
                        }
                    }
                    None if !tree.complicate() => break,
                    None => {}
                }
            }
        }
        return Verdict::found(match reason {
            Some((r, f)) => Found::new(f.kind, f.grade, f.rule, value, r).with_repro(f.repro),
            // The parent knows the crash of step `at` (its call, grade and reproducer).
            None => Found::new(
                "crash",
                Grade::Violation,
                rule,
                value,
                format!("{round}:{at}"),
            ),
        });
    }
    Verdict::Pass(format!("{cases} generated cases"))
}

/// Findings unless `problems` is empty: one per (kind, grade, rule), the first problem of
/// each as the counterexample (with its reproducer), the count and the next few as detail.
pub(crate) fn from_problems(problems: &[Found]) -> Verdict {
    let mut groups: Vec<Vec<&Found>> = Vec::new();
    for p in problems {
        match groups
            .iter_mut()
            .find(|g| g[0].kind == p.kind && g[0].grade == p.grade && g[0].rule.id == p.rule.id)
        {
            Some(g) => g.push(p),
            None => groups.push(vec![p]),
        }
    }
    if groups.is_empty() {
        return Verdict::Pass(String::new());
    }
    Verdict::Found(
        groups
            .into_iter()
            .map(|g| {
                let rest: Vec<String> = g[1..]
                    .iter()
                    .take(4)
                    .map(|p| p.counterexample.clone())
                    .collect();
                let detail = if rest.is_empty() {
                    g[0].counterexample.clone()
                } else {
                    format!("{} cases; also: {}", g.len(), rest.join("; "))
                };
                Found {
                    detail,
                    ..g[0].clone()
                }
            })
            .collect(),
    )
}

/// Counts of statuses, and of findings by grade, for summaries.
pub fn summary(report: &Report) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for o in &report.outcomes {
        *m.entry(o.status.to_string()).or_insert(0) += 1;
        for f in &o.findings {
            *m.entry(format!("finding graded {}", f.grade)).or_insert(0) += 1;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::Lines as _;

    #[test]
    fn failures_shrink_to_the_minimal_input() {
        let v = check_prop_replaying(
            64,
            &rules::NAMES,
            0u32..1000,
            |x| {
                if x >= 17 {
                    Err(TestCaseError::fail("too big"))
                } else {
                    Ok(())
                }
            },
            None,
            0,
        );
        assert!(
            matches!(&v, Verdict::Found(f) if f[0].kind == "answer" && f[0].counterexample == "17"
                && f[0].grade == Grade::Violation && f[0].rule.id == rules::NAMES.id),
            "{v:?}"
        );
        let graded = check_prop_replaying(
            8,
            &rules::NAMES,
            0u32..1000,
            |_| {
                failing("error", Grade::ErrorClass, &rules::ERROR_CODES, None);
                Err(TestCaseError::fail("wrong class"))
            },
            None,
            0,
        );
        assert!(
            matches!(&graded, Verdict::Found(f) if f[0].kind == "error"
                && f[0].grade == Grade::ErrorClass && f[0].rule.id == rules::ERROR_CODES.id),
            "{graded:?}"
        );
        let pass = check_prop_replaying(16, &rules::NAMES, 0u32..10, |_| Ok(()), None, 0);
        assert!(matches!(pass, Verdict::Pass(_)), "{pass:?}");
    }

    /// The cross-process crash shrinking, simulated in one process: a panic stands for the
    /// child dying in a call; the "parent" re-runs with the crashed steps marked, as `run`
    /// does. It must end at the same minimal input as in-process shrinking of a failure.
    #[test]
    fn crashes_shrink_across_re_executions_like_failures() {
        let crashes = |x: u32| x >= 100;
        let in_process = check_prop_replaying(
            1,
            &rules::NAMES,
            0u32..100_000,
            |x| {
                if crashes(x) {
                    Err(TestCaseError::fail("fails"))
                } else {
                    Ok(())
                }
            },
            None,
            0,
        );
        let Verdict::Found(f) = &in_process else {
            panic!("the first case of the fixed seed should fail: {in_process:?}");
        };
        let want = f[0].counterexample.clone();
        let mut replay: Option<Replay> = None;
        let mut executions = 0;
        let verdict = loop {
            executions += 1;
            assert!(executions < 200, "shrinking did not end");
            let calls = std::cell::Cell::new(0usize);
            let r = replay.clone();
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                check_prop_replaying(
                    1,
                    &rules::NAMES,
                    0u32..100_000,
                    |x| {
                        if crashes(x) {
                            panic!("simulated crash");
                        }
                        calls.set(calls.get() + 1);
                        Ok(())
                    },
                    r,
                    0,
                )
            }));
            match run {
                Ok(v) => break v,
                Err(_) => {
                    // The step of the call that died: calls run steps in order, skipping
                    // step 0 and the crashed steps when replaying.
                    let n = calls.get();
                    let step = match &replay {
                        None => n,
                        Some(r) => (1..).filter(|s| !r.crashed.contains(s)).nth(n).unwrap_or(0),
                    };
                    let r = replay.get_or_insert_with(Replay::default);
                    if step > 0 {
                        r.crashed.push(step);
                    }
                }
            }
        };
        match verdict {
            Verdict::Found(f) if f[0].kind == "crash" => assert_eq!(f[0].counterexample, want),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn result_lines_round_trip() {
        let repro = Repro::new(2, repro::Expect::Crash).line("x();\ny(\"\\t\");");
        let v = Verdict::Found(vec![
            Found::new(
                "crash",
                Grade::UncheckedInput,
                &rules::UNCHECKED,
                "a\tb\nc\\",
                "d",
            )
            .with_repro(Some(repro.clone())),
            Found::new("error", Grade::ErrorClass, &rules::ERROR_CODES, "e", "f"),
        ]);
        let mut p = Parsed::default();
        for l in verdict_lines(&v).unwrap().lines() {
            p.line(l);
        }
        match p.result {
            Some(Verdict::Found(f)) => {
                assert_eq!(f.len(), 2);
                assert_eq!((f[0].kind, f[0].grade), ("crash", Grade::UncheckedInput));
                assert_eq!(f[0].rule.id, rules::UNCHECKED.id);
                assert_eq!(f[0].counterexample, "a\tb\nc\\");
                assert_eq!(f[0].detail, "d");
                assert_eq!(f[0].repro.as_ref(), Some(&repro));
                assert_eq!((f[1].kind, f[1].grade), ("error", Grade::ErrorClass));
                assert_eq!(f[1].repro, None);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_verdict("pass\tnote"), Verdict::Pass(n) if n == "note"));
    }

    #[test]
    fn findings_group_by_kind_grade_and_rule() {
        let f = |k, g| Found::new(k, g, &rules::ERROR_CODES, "c", "d");
        let g = grouped(vec![
            f("crash", Grade::UncheckedInput),
            f("error", Grade::ErrorClass),
            f("crash", Grade::UncheckedInput),
        ]);
        let tags: Vec<String> = g.iter().map(Finding::tag).collect();
        assert_eq!(
            tags,
            [
                "error/error-class/000-1.2.9-error-codes",
                "crash/unchecked-input/000-1.2.9-error-codes"
            ]
        );
        assert!(g[1].detail.contains("and 1 more"), "{}", g[1].detail);
    }

    #[test]
    fn keys_from_library_versions() {
        let mpich =
            "MPICH Version:\t4.0.2\nMPICH configure:\t--prefix=/usr --with-device=ch4:ucx\n";
        assert_eq!(implementation_key(mpich), Some("mpich"));
        let ev = "MPICH Version:\t4.0.2\nMPICH configure:\t--prefix=/x --with-device=ch4:ofi \
                  --enable-mpit-pvars=all --enable-mpit-events=yes --disable-fortran\n";
        assert_eq!(implementation_key(ev), Some("mpich-ev"));
        let off = "MPICH Version:\t4.0.2\nMPICH configure:\t--enable-mpit-events=no\n";
        assert_eq!(implementation_key(off), Some("mpich"));
        assert_eq!(
            implementation_key("MPICH Version:      5.0.2\n"),
            Some("mpich5")
        );
        assert_eq!(
            implementation_key(
                "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
            ),
            Some("openmpi")
        );
        assert_eq!(
            implementation_key("Open MPI v5.0.11, package: Open MPI"),
            Some("openmpi5")
        );
        assert_eq!(
            implementation_key("Intel(R) MPI Library 2021.18.1 for Linux* OS\n"),
            Some("intel")
        );
        assert_eq!(implementation_key("MPICH Version:\t3.4.1\n"), None);
        assert_eq!(implementation_key("Some MPI 1.0"), None);
    }
}
