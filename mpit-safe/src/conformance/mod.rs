//! Property-based conformance tests of the installed MPI's MPI_T against the standard.
//!
//! Each [`Property`] states one rule of the standard, names the section it comes from (the
//! MPI-3.0 draft `../shared/spec/000...` for variables, sessions, categories and strings, with
//! the section of MPI-4.1 where the rule now lives; MPI-4.1 §16.3.8 for events) and checks it
//! with proptest over generated inputs (indices in and out of range, buffer lengths, real and
//! mutated names, random operation sequences) or, where the input space is small, over all of
//! it. Runs are deterministic (a fixed seed), so a finding is reproducible and the report can
//! be compared with a recorded one.
//!
//! Isolation: [`run`] executes every property in a child process (the program re-executed
//! with `--run-property ID`, see [`child_main`]), so a crash inside MPI is a finding naming the
//! call that caused it, not the end of the run. Sweeps over every variable resume after a crash
//! and avoid the variable that crashed, so one run finds every crashing variable.
//!
//! ```no_run
//! use mpit_safe::conformance::{self, Config};
//! // In `main`: children run one property and exit.
//! conformance::child_main();
//! let report = conformance::run(&Config::default());
//! for o in &report.outcomes {
//!     println!("{} {}", o.id, o.status);
//! }
//! ```

use std::collections::BTreeMap;
use std::ffi::c_int;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config as PtConfig, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use mpit_sys as sys;

#[cfg(mpit_events)]
mod events;
#[cfg(mpit_events)]
pub use events::{EventOp, RaiseAt, check_event_sequence, event_op};
mod props;
mod raw;
mod sessions;

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
    /// The test event provider to preload for the event properties (MPICH; `None`: the
    /// implementation's own events).
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
            mpiexec: std::env::var("MPIEXEC").unwrap_or_else(|_| "mpiexec".into()),
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
    /// In a job of this many processes started by `mpiexec`.
    Ranks(u32),
    /// In one child process with the test event provider preloaded (if configured).
    Events,
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
    check: fn(&Ctx) -> Verdict,
}

/// The result of one property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The implementation follows the rule on every input tried.
    Pass,
    /// It departs from the rule; `kind` is a short stable tag (`violation`, `crash`, `holes`,
    /// `timeout`, ...).
    Finding {
        /// The tag.
        kind: String,
    },
    /// The rule cannot be checked here (the reason says why).
    Skip {
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Pass => f.write_str("pass"),
            Status::Finding { kind } => write!(f, "finding:{kind}"),
            Status::Skip { .. } => f.write_str("skip"),
        }
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
    /// Pass, finding or skip.
    pub status: Status,
    /// The minimal input that shows a finding (shrunk by proptest), or the call that crashed.
    pub counterexample: Option<String>,
    /// What was observed.
    pub detail: String,
    /// Wall-clock seconds the property took, child processes included.
    pub seconds: f64,
}

/// The implementation a report is about.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// From the header: `MPICH` or `Open MPI`.
    pub name: &'static str,
    /// The header's version of the implementation.
    pub version: &'static str,
    /// `MPI_Get_library_version` of the library actually loaded.
    pub library_version: String,
    /// `MPI_Get_version`: the MPI standard version the library supports.
    pub mpi_version: (i32, i32),
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
            .filter(|o| matches!(o.status, Status::Finding { .. }))
            .count()
    }
}

/// What a property concluded, inside its process.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    /// Passed; the note says what was covered.
    Pass(String),
    Finding {
        kind: &'static str,
        counterexample: String,
        detail: String,
    },
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

    pub(crate) fn violation(counterexample: impl Into<String>, detail: impl Into<String>) -> Self {
        Verdict::Finding {
            kind: "violation",
            counterexample: counterexample.into(),
            detail: detail.into(),
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
}

impl Ctx {
    pub(crate) fn avoids(&self, key: &str) -> bool {
        self.avoid.iter().any(|a| a == key)
    }
}

const CALL: &str = "@@call ";
const CASE: &str = "@@case ";
const REPLAY_ENV: &str = "MPIT_CONFORM_REPLAY";
/// Set in every child, so a child whose `main` forgot `child_main` cannot recurse.
const CHILD_ENV: &str = "MPIT_CONFORM_CHILD";
const RESULT: &str = "@@result ";
const ARG: &str = "--run-property";
const AVOID_ENV: &str = "MPIT_CONFORM_AVOID";
const CASES_ENV: &str = "MPIT_CONFORM_CASES";

/// Announces the MPI call a child is about to make: if the process dies in it, the parent
/// reports this text as the call that crashed (and `key`, if given, is avoided on resume).
pub(crate) fn announce(key: Option<&str>, text: &str) {
    println!(
        "{CALL}{}\t{}",
        key.unwrap_or(""),
        text.replace(['\n', '\t'], " ")
    );
    let _ = std::io::stdout().flush();
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
    let id = args.get(pos + 1).cloned().unwrap_or_default();
    let ctx = Ctx {
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
    };
    let verdict = match properties().iter().find(|p| p.id == id) {
        Some(p) => (p.check)(&ctx),
        None => Verdict::Skip(format!("no property {id}")),
    };
    // Ranks other than 0 of a cross-process property print nothing.
    if let Some(v) = verdict_line(&verdict) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{RESULT}{v}");
        let _ = out.flush();
    }
    // Exit without running destructors or MPI_T_finalize: the ordering crashes of
    // finalization are a property of their own (`mpit-safe/tests/ordering.rs`), not of
    // each property. MPI_Finalize runs if MPI was initialised (rsmpi's universe drops in
    // the property), so mpiexec sees a clean end.
    std::process::exit(0);
}

fn verdict_line(v: &Verdict) -> Option<String> {
    Some(match v {
        Verdict::Pass(note) => format!("pass\t{}", escape(note)),
        Verdict::Skip(r) if r == props::SILENT => return None,
        Verdict::Skip(r) => format!("skip\t{}", escape(r)),
        Verdict::Finding {
            kind,
            counterexample,
            detail,
        } => format!(
            "finding\t{kind}\t{}\t{}",
            escape(counterexample),
            escape(detail)
        ),
    })
}

/// What one child process produced.
struct ChildRun {
    result: Option<Verdict>,
    /// The last `@@case CASE STEP` announced.
    last_case: Option<(u32, usize)>,
    last_call: Option<(String, String)>,
    exit: String,
    crashed: bool,
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
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let (Isolation::Events, Some(provider)) = (p.isolation, &cfg.event_provider) {
        cmd.env("LD_PRELOAD", provider);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ChildRun {
                result: Some(Verdict::Skip(format!("cannot start {:?}: {e}", cfg.exe))),
                last_case: None,
                last_call: None,
                exit: String::new(),
                crashed: false,
            };
        }
    };
    let stdout = child.stdout.take();
    // The last line the child wrote to stderr (an assertion, an MPI error message) is kept
    // for the report of a crash.
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut last = String::new();
        if let Some(s) = stderr {
            for l in BufReader::new(s).lines().map_while(Result::ok) {
                if !l.trim().is_empty() {
                    last = l;
                }
            }
        }
        last
    });
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        if let Some(s) = stdout {
            for l in BufReader::new(s).lines() {
                match l {
                    Ok(l) => lines.push(l),
                    Err(_) => break,
                }
            }
        }
        lines
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > cfg.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let lines = reader.join().unwrap_or_default();
    let mut run = ChildRun {
        result: None,
        last_case: None,
        last_call: None,
        exit: String::new(),
        crashed: false,
    };
    for l in &lines {
        if let Some(c) = l.strip_prefix(CALL) {
            let (key, text) = c.split_once('\t').unwrap_or(("", c));
            run.last_call = Some((key.to_string(), text.to_string()));
        } else if let Some(c) = l.strip_prefix(CASE) {
            run.last_case = c
                .split_once('\t')
                .and_then(|(k, s)| Some((k.parse().ok()?, s.parse().ok()?)));
        } else if let Some(r) = l.strip_prefix(RESULT) {
            run.result = Some(parse_verdict(r));
        }
    }
    run.exit = match status {
        None => format!("killed after {} s (timeout)", cfg.timeout.as_secs()),
        Some(s) => describe_exit(s),
    };
    let last_err = err_reader.join().unwrap_or_default();
    if status.is_some_and(|s| s.code().is_some()) && !last_err.is_empty() {
        // An exit code, not a signal: what the library said before exiting.
        let shown: String = last_err.trim().chars().take(160).collect();
        run.exit = format!("{} (stderr: {shown})", run.exit);
    }
    run.crashed = status.is_none_or(|s| !s.success()) || run.result.is_none();
    run
}

fn describe_exit(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            let name = match sig {
                6 => "SIGABRT",
                7 => "SIGBUS",
                8 => "SIGFPE",
                9 => "SIGKILL",
                11 => "SIGSEGV",
                _ => "signal",
            };
            return format!("{name} ({sig})");
        }
    }
    match s.code() {
        Some(c) => format!("exit code {c}"),
        None => "unknown exit".into(),
    }
}

fn parse_verdict(r: &str) -> Verdict {
    let f: Vec<&str> = r.split('\t').collect();
    match f[..] {
        ["pass"] => Verdict::Pass(String::new()),
        ["pass", note] => Verdict::Pass(unescape(note)),
        ["skip", reason] => Verdict::Skip(unescape(reason)),
        ["finding", kind, cex, detail] => Verdict::Finding {
            kind: match kind {
                "violation" => "violation",
                "holes" => "holes",
                "crash" => "crash",
                "accepted" => "accepted",
                _ => "other",
            },
            counterexample: unescape(cex),
            detail: unescape(detail),
        },
        _ => Verdict::Skip(format!("unreadable result line {r:?}")),
    }
}

/// Runs one property in child processes (resuming sweeps after crashes).
fn run_property(cfg: &Config, p: &Property, avoid_vars: &mut Vec<String>) -> Outcome {
    let start = Instant::now();
    let mut avoid = avoid_vars.clone();
    let mut crashes: Vec<String> = Vec::new();
    let max_resumes = if p.isolation == Isolation::Sweep {
        40
    } else {
        0
    };
    // Crash shrinking of generated inputs (see `check_prop`): the case that crashed, the shrink
    // steps that crashed, and what each crash was.
    let mut replay: Option<(u32, Vec<usize>)> = None;
    let mut step_crash: BTreeMap<usize, String> = BTreeMap::new();
    const SHRINK_BUDGET: usize = 12;
    let verdict = loop {
        let arg = replay.as_ref().map(|(k, steps)| {
            let steps: Vec<String> = steps.iter().map(ToString::to_string).collect();
            let last = if step_crash.len() >= SHRINK_BUDGET {
                ";last"
            } else {
                ""
            };
            format!("{k};{}{last}", steps.join(","))
        });
        let run = run_child(cfg, p, &avoid, arg.as_deref());
        if !run.crashed {
            break run.result;
        }
        let call = run
            .last_call
            .clone()
            .map_or("(no call announced)".to_string(), |(_, t)| t);
        let text = if run.result.is_some() {
            // The property finished and reported; the process died afterwards.
            format!("{} at process exit, after {call}", run.exit)
        } else {
            format!("{} in {call}", run.exit)
        };
        if let (false, Some((case, step))) = (p.isolation == Isolation::Sweep, run.last_case) {
            if step_crash.len() < SHRINK_BUDGET + 2
                && replay.as_ref().is_none_or(|(k, _)| *k == case)
            {
                step_crash.insert(step, text);
                let r = replay.get_or_insert((case, Vec::new()));
                if step > 0 {
                    r.1.push(step);
                }
                continue;
            }
        }
        crashes.push(text);
        match run.last_call {
            Some((key, _)) if !key.is_empty() && crashes.len() <= max_resumes => {
                avoid.push(key.clone());
                if key.starts_with("cvar:") || key.starts_with("pvar:") {
                    avoid_vars.push(key);
                }
            }
            _ => break None,
        }
    };
    let shrunk_crash = match &verdict {
        Some(Verdict::Finding {
            kind: "crash",
            counterexample,
            detail,
        }) if !step_crash.is_empty() => {
            let (step, extra) = detail.split_once('\t').unwrap_or((detail, ""));
            Some((
                counterexample.clone(),
                step.parse().unwrap_or(0),
                extra.to_string(),
            ))
        }
        _ => None,
    };
    let (status, counterexample, detail) = if let Some((value, step, extra)) = shrunk_crash {
        let call = step_crash.get(&step).cloned().unwrap_or_else(|| {
            format!(
                "(shrink step {step}; crashed steps {:?})",
                step_crash.keys().collect::<Vec<_>>()
            )
        });
        (
            Status::Finding {
                kind: "crash".into(),
            },
            Some(value),
            format!(
                "{call} (minimal crashing input, shrunk over {} re-executions){}{extra}",
                step_crash.len(),
                if extra.is_empty() { "" } else { "; " }
            ),
        )
    } else if !crashes.is_empty() || !step_crash.is_empty() {
        crashes.extend(step_crash.values().next().cloned());
        let mut detail = crashes.join("; ");
        if let Some(Verdict::Finding {
            counterexample,
            detail: d,
            ..
        }) = &verdict
        {
            detail = format!("{detail}; after resuming: {d} ({counterexample})");
        }
        (
            Status::Finding {
                kind: "crash".into(),
            },
            crashes.first().cloned(),
            detail,
        )
    } else {
        match verdict {
            Some(Verdict::Pass(note)) => (Status::Pass, None, note),
            Some(Verdict::Skip(r)) => (Status::Skip { reason: r.clone() }, None, r),
            Some(Verdict::Finding {
                kind,
                counterexample,
                detail,
            }) => (
                Status::Finding { kind: kind.into() },
                Some(counterexample),
                detail,
            ),
            None => (
                Status::Finding {
                    kind: "crash".into(),
                },
                None,
                "no result".into(),
            ),
        }
    };
    Outcome {
        id: p.id,
        section: p.section,
        rule: p.rule,
        status,
        counterexample,
        detail,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The implementation, from the header and from `MPI_Get_library_version` (callable before
/// `MPI_Init`).
pub fn implementation() -> Implementation {
    let mut buf = vec![0u8; 8192];
    let mut len: c_int = 0;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both may be called at any time, before MPI_Init too; the buffer is larger than
    // MPI_MAX_LIBRARY_VERSION_STRING in both implementations (8192 in MPICH, 256 in Open MPI).
    unsafe {
        sys::MPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len);
        sys::MPI_Get_version(&mut major, &mut minor);
    }
    let len = usize::try_from(len).unwrap_or(0).min(buf.len());
    let text = String::from_utf8_lossy(&buf[..len]);
    let text = text.trim_end_matches('\0');
    Implementation {
        name: sys::IMPLEMENTATION,
        version: sys::IMPLEMENTATION_VERSION,
        library_version: text.lines().next().unwrap_or("").trim().to_string(),
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
        let outcomes = properties()
            .iter()
            .map(|p| Outcome {
                id: p.id,
                section: p.section,
                rule: p.rule,
                status: Status::Skip {
                    reason: "conformance::run called in a child: call child_main first".into(),
                },
                counterexample: None,
                detail: String::new(),
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
    let outcomes = properties()
        .iter()
        .filter(|p| cfg.only.is_empty() || cfg.only.iter().any(|o| o == p.id))
        .map(|p| run_property(cfg, p, &mut avoid_vars))
        .collect();
    Report {
        implementation: implementation(),
        cases: cfg.cases,
        outcomes,
    }
}

/// Runs `test` over `strategy` with a fixed seed and `cases` cases; a failure is shrunk and
/// reported as a violation with the minimal input.
///
/// Crashes are shrunk too, across processes: before each case and each shrink step the child
/// announces `@@case CASE STEP`; when it dies, the parent re-executes it with
/// `MPIT_CONFORM_REPLAY=CASE;STEPS` (the steps that crashed so far), and the child replays the
/// same deterministic generation and shrinking, taking those steps as failures without running
/// them. The last crashing step is the minimal crashing input.
pub(crate) fn check_prop<S>(
    cases: u32,
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
    let replay: Option<Replay> = std::env::var(REPLAY_ENV).ok().and_then(|r| {
        let mut f = r.split(';');
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
    });
    check_prop_replaying(cases, strategy, test, replay, round)
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
    let outcome = |case: u32, step: usize, value: S::Value| -> Option<Option<String>> {
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
        match test(value) {
            Err(TestCaseError::Fail(r)) => Some(Some(r.to_string())),
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
        return match reason {
            Some(r) => Verdict::violation(value, r),
            None => Verdict::Finding {
                kind: "crash",
                counterexample: value,
                detail: at.to_string(),
            },
        };
    }
    Verdict::Pass(format!("{cases} generated cases"))
}

/// A finding unless `problems` is empty: the first problem is the counterexample, the count
/// and the next few are the detail.
pub(crate) fn from_problems(kind: &'static str, problems: &[String]) -> Verdict {
    match problems.split_first() {
        None => Verdict::Pass(String::new()),
        Some((first, rest)) => Verdict::Finding {
            kind,
            counterexample: first.clone(),
            detail: format!(
                "{} case(s){}{}",
                problems.len(),
                if rest.is_empty() { "" } else { "; also: " },
                rest.iter().take(4).cloned().collect::<Vec<_>>().join("; ")
            ),
        },
    }
}

/// Counts of findings by kind, for summaries.
pub fn summary(report: &Report) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for o in &report.outcomes {
        *m.entry(o.status.to_string()).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_shrink_to_the_minimal_input() {
        let v = check_prop_replaying(
            64,
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
            matches!(&v, Verdict::Finding { kind: "violation", counterexample, .. } if counterexample == "17"),
            "{v:?}"
        );
        let pass = check_prop_replaying(16, 0u32..10, |_| Ok(()), None, 0);
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
        let Verdict::Finding {
            counterexample: want,
            ..
        } = in_process
        else {
            panic!("the first case of the fixed seed should fail: {in_process:?}");
        };
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
            Verdict::Finding {
                kind: "crash",
                counterexample,
                ..
            } => assert_eq!(counterexample, want),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn result_lines_round_trip() {
        let v = Verdict::Finding {
            kind: "crash",
            counterexample: "a\tb\nc\\".into(),
            detail: "d".into(),
        };
        let line = verdict_line(&v).unwrap();
        match parse_verdict(&line) {
            Verdict::Finding {
                kind,
                counterexample,
                detail,
            } => {
                assert_eq!(kind, "crash");
                assert_eq!(counterexample, "a\tb\nc\\");
                assert_eq!(detail, "d");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_verdict("pass\tnote"), Verdict::Pass(n) if n == "note"));
    }
}
