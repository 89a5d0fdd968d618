//! Which orderings of `MPI_T_init_thread`/`MPI_T_finalize` relative to `MPI_Init_thread`/
//! `MPI_Finalize` the MPI under test survives, so that mpit-safe's docs state facts.
//!
//! MPI-4.1 §16.3.4 lets MPI_T be initialised and finalised at any time, before `MPI_Init` and
//! after `MPI_Finalize`, and counts its initialisations: MPI_T stays initialised until
//! `MPI_T_finalize` has been called as often as `MPI_T_init_thread`, and may be initialised again
//! afterwards. Every ordering below is therefore allowed; real implementations still crash on
//! some (open-mpi/ompi#11485, pmodels/mpich#7954).
//!
//! Two tests run the eight orderings: [`mpi_t_orderings_around_mpi_init`] with raw MPI_T calls
//! ([`Mode::Raw`]), and [`safe_api_orderings_around_mpi_init`] with MPI_T through mpit-safe's
//! [`Mpit`] token ([`Mode::Safe`]), whose process-lifetime anchor initialisation keeps MPI_T's
//! count of initialisations above zero. `MPI_Init_thread` and `MPI_Finalize` are raw in both.
//!
//! `MPI_Init` may run only once per process and a crash must not take the test down, so the tests
//! re-execute their own binary once per ordering: with [`CHILD_ENV`] naming a mode and an
//! ordering, the test function is a child that performs the ordering's steps, printing (and
//! flushing) a line before and after each, and exits. Without it, the test function is the
//! parent: it runs every child under a timeout, classifies the outcome (ok, error, crash, exit,
//! hang), prints a table, writes it as JSON lines to
//! `$CARGO_TARGET_TMPDIR/ordering-<impl>-<version>.jsonl` (raw) or
//! `$CARGO_TARGET_TMPDIR/ordering-safe-<impl>-<version>.jsonl` (safe API), and reports every
//! ordering that fails as a finding. The raw test fails only if one of the orderings mpit-safe
//! relies on ([`Ordering::required`]) fails; the safe test fails if one of those fails through
//! the safe API, or if an ordering that succeeds raw fails through the safe API (the anchor must
//! never make things worse). The raw orderings run once per test process and both tests use the
//! result ([`raw_reports`]), so the safe test compares with raw outcomes of the same run.
//!
//! The children run under the conformance crate's harness ([`mpit_conformance::child`]): own
//! process group, output captured line by line, killed after the timeout.
//!
//! Run: `scripts/with-mpi IMPL cargo test -p mpit-conformance --test ordering -- --nocapture`.
//! `MPIT_ORDERING_TIMEOUT_SECS` overrides the per-child timeout (60 s).

use std::ffi::c_int;
use std::fmt::Write as _;
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::Duration;

use mpit_conformance::child::{self, Ended, Text};
use mpit_safe::Mpit;
use mpit_sys::{
    IMPLEMENTATION, IMPLEMENTATION_VERSION, MPI_Finalize, MPI_Init_thread, MPI_SUCCESS,
    MPI_T_ERR_CANNOT_INIT, MPI_T_ERR_INVALID_INDEX, MPI_T_ERR_MEMORY, MPI_T_ERR_NOT_INITIALIZED,
    MPI_T_cvar_get_num, MPI_T_finalize, MPI_T_init_thread, MPI_THREAD_SINGLE,
};

/// Environment variable that makes the test binary a child running the named ordering in the
/// named mode: `MODE:KEY`, e.g. `safe:c` ([`Mode::name`], [`Ordering::key`]).
const CHILD_ENV: &str = "MPIT_SAFE_ORDERING_CHILD";
/// Prefix of the child's progress lines on stdout (MPI may print there too).
const TAG: &str = "mpit-ordering:";
/// Exit code of a child whose step returned an error code.
const EXIT_STEP_ERROR: i32 = 3;
/// Exit code of a child given an unknown mode or ordering.
const EXIT_USAGE: i32 = 4;
/// Default time a child may take before it counts as hung and is killed.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How the child reaches MPI_T; `MPI_Init_thread` and `MPI_Finalize` are raw in both modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Raw `MPI_T_init_thread`, `MPI_T_cvar_get_num`, `MPI_T_finalize`.
    Raw,
    /// mpit-safe: [`Mpit::init`] pushes a token on a stack, [`Mpit::cvar_count`] queries the top
    /// one, [`Mpit::finalize`] pops and finalises the top one.
    Safe,
}

impl Mode {
    const ALL: [Mode; 2] = [Mode::Raw, Mode::Safe];

    /// The name in [`CHILD_ENV`] and in the JSON lines.
    fn name(self) -> &'static str {
        match self {
            Mode::Raw => "raw",
            Mode::Safe => "safe",
        }
    }

    fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The test function whose children run in this mode, passed to the child with `--exact`.
    fn test_name(self) -> &'static str {
        match self {
            Mode::Raw => "ordering::mpi_t_orderings_around_mpi_init",
            Mode::Safe => "ordering::safe_api_orderings_around_mpi_init",
        }
    }

    /// The table's title.
    fn title(self) -> &'static str {
        match self {
            Mode::Raw => "MPI_T/MPI init-finalize orderings",
            Mode::Safe => {
                "MPI_T/MPI init-finalize orderings through the safe API (mpit_safe::Mpit tokens)"
            }
        }
    }

    /// The JSON lines' file name in `$CARGO_TARGET_TMPDIR`.
    fn jsonl_name(self) -> String {
        let prefix = match self {
            Mode::Raw => "ordering",
            Mode::Safe => "ordering-safe",
        };
        format!(
            "{prefix}-{}-{}.jsonl",
            slug(IMPLEMENTATION),
            slug(IMPLEMENTATION_VERSION)
        )
    }
}

/// One call of an ordering (in [`Mode::Raw`]; [`Step::call`] names the call in either mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)`.
    TInit,
    /// `MPI_T_cvar_get_num(&n)`: must succeed while MPI_T is initialised.
    TQuery,
    /// `MPI_T_finalize()`.
    TFinalize,
    /// `MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided)`.
    Init,
    /// `MPI_Finalize()`.
    Finalize,
}

impl Step {
    /// Every step, for parsing.
    const ALL: [Step; 5] = [
        Step::TInit,
        Step::TQuery,
        Step::TFinalize,
        Step::Init,
        Step::Finalize,
    ];

    /// Short name used in the table and the child's progress lines.
    fn name(self) -> &'static str {
        match self {
            Step::TInit => "TInit",
            Step::TQuery => "TQuery",
            Step::TFinalize => "TFinalize",
            Step::Init => "Init",
            Step::Finalize => "Finalize",
        }
    }

    /// The function the step calls in `mode`.
    fn call(self, mode: Mode) -> &'static str {
        match (mode, self) {
            (Mode::Raw, Step::TInit) => "MPI_T_init_thread",
            (Mode::Raw, Step::TQuery) => "MPI_T_cvar_get_num",
            (Mode::Raw, Step::TFinalize) => "MPI_T_finalize",
            (Mode::Safe, Step::TInit) => "Mpit::init",
            (Mode::Safe, Step::TQuery) => "Mpit::cvar_count",
            (Mode::Safe, Step::TFinalize) => "Mpit::finalize",
            (_, Step::Init) => "MPI_Init_thread",
            (_, Step::Finalize) => "MPI_Finalize",
        }
    }

    fn from_name(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Performs the raw call; returns its return code and what it returned through out-pointers.
    ///
    /// Only the child calls this, in the order of one [`Ordering`]; each ordering is one the
    /// standard allows, which is what the test is about.
    fn run_raw(self) -> (c_int, String) {
        let mut out: c_int = -1;
        let rc = match self {
            // SAFETY: MPI_T may be initialised at any time, also before MPI_Init and after
            // MPI_Finalize, and repeatedly (MPI-4.1 §16.3.4); the out-pointer is valid.
            Step::TInit => unsafe { MPI_T_init_thread(MPI_THREAD_SINGLE, &mut out) },
            // SAFETY: every ordering calls this only while MPI_T is initialised; the out-pointer
            // is valid.
            Step::TQuery => unsafe { MPI_T_cvar_get_num(&mut out) },
            // SAFETY: every ordering calls this at most as often as MPI_T_init_thread so far.
            Step::TFinalize => unsafe { MPI_T_finalize() },
            // SAFETY: every ordering initialises MPI once, with the null argc/argv the standard
            // allows; the out-pointer is valid. Only this thread calls MPI in the child.
            Step::Init => unsafe {
                MPI_Init_thread(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    MPI_THREAD_SINGLE,
                    &mut out,
                )
            },
            // SAFETY: every ordering finalises MPI once, after its MPI_Init.
            Step::Finalize => unsafe { MPI_Finalize() },
        };
        let out = match self {
            Step::TInit | Step::Init => format!(" provided={out}"),
            Step::TQuery => format!(" cvars={out}"),
            Step::TFinalize | Step::Finalize => String::new(),
        };
        (rc, out)
    }

    /// Performs the step in `mode`; in [`Mode::Safe`] MPI_T goes through the `tokens` stack.
    fn run(self, mode: Mode, tokens: &mut Vec<Mpit>) -> StepResult {
        if mode == Mode::Raw || matches!(self, Step::Init | Step::Finalize) {
            let (rc, out) = self.run_raw();
            return StepResult {
                rc,
                out,
                error: None,
            };
        }
        let result = match self {
            Step::TInit => Mpit::init().map(|t| {
                let out = format!(" provided={}", t.provided());
                tokens.push(t);
                out
            }),
            Step::TQuery => match tokens.last() {
                Some(t) => t.cvar_count().map(|n| format!(" cvars={n}")),
                None => return StepResult::unbalanced("no token to query"),
            },
            Step::TFinalize => match tokens.pop() {
                Some(t) => t.finalize().map(|()| String::new()),
                None => return StepResult::unbalanced("no token to finalize"),
            },
            Step::Init | Step::Finalize => unreachable!("raw in both modes"),
        };
        match result {
            Ok(out) => StepResult {
                rc: MPI_SUCCESS,
                out,
                error: None,
            },
            Err(e) => StepResult {
                rc: e.raw_code().unwrap_or(RC_NOT_FROM_MPI),
                out: String::new(),
                error: Some(e.to_string()),
            },
        }
    }
}

/// The return code reported for a safe-API error the crate made itself (no MPI return code).
const RC_NOT_FROM_MPI: c_int = -1;

/// What one step of the child returned.
struct StepResult {
    /// The MPI return code (`MPI_SUCCESS` if the safe API returned `Ok`).
    rc: c_int,
    /// What the call returned through out-pointers, as ` key=value` fields.
    out: String,
    /// The safe API's error, displayed.
    error: Option<String>,
}

impl StepResult {
    /// A safe-API step the ordering's token stack does not allow (a bug in [`Ordering::steps`]).
    fn unbalanced(why: &str) -> StepResult {
        StepResult {
            rc: RC_NOT_FROM_MPI,
            out: String::new(),
            error: Some(format!("test bug: {why}")),
        }
    }
}

/// An ordering of MPI_T's and MPI's initialisation and finalisation; all are allowed by MPI-4.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ordering {
    /// (a) A whole MPI_T epoch before `MPI_Init`.
    EpochBeforeInit,
    /// (b) A whole MPI_T epoch between `MPI_Init` and `MPI_Finalize`.
    EpochInsideInit,
    /// (c) An epoch open across `MPI_Init`, closed before `MPI_Finalize`.
    EpochSpanningInit,
    /// (d) An epoch opened after `MPI_Init`, closed after `MPI_Finalize`.
    EpochSpanningFinalize,
    /// (e) An epoch around both `MPI_Init` and `MPI_Finalize`.
    EpochSpanningBoth,
    /// (f) A whole MPI_T epoch after `MPI_Finalize`.
    EpochAfterFinalize,
    /// (g) Two nested MPI_T initialisations around `MPI_Init`; the inner finalize must leave
    /// MPI_T initialised.
    NestedEpochsAroundInit,
    /// (h) An epoch inside `MPI_Init`/`MPI_Finalize`, then a second one, also inside.
    ReinitInsideInit,
}

impl Ordering {
    /// Every ordering, in the order of the table.
    const ALL: [Ordering; 8] = [
        Ordering::EpochBeforeInit,
        Ordering::EpochInsideInit,
        Ordering::EpochSpanningInit,
        Ordering::EpochSpanningFinalize,
        Ordering::EpochSpanningBoth,
        Ordering::EpochAfterFinalize,
        Ordering::NestedEpochsAroundInit,
        Ordering::ReinitInsideInit,
    ];

    /// The letter that names the ordering (in the child's environment, the table, the docs).
    fn key(self) -> &'static str {
        match self {
            Ordering::EpochBeforeInit => "a",
            Ordering::EpochInsideInit => "b",
            Ordering::EpochSpanningInit => "c",
            Ordering::EpochSpanningFinalize => "d",
            Ordering::EpochSpanningBoth => "e",
            Ordering::EpochAfterFinalize => "f",
            Ordering::NestedEpochsAroundInit => "g",
            Ordering::ReinitInsideInit => "h",
        }
    }

    /// One line that says what the ordering is.
    fn label(self) -> &'static str {
        match self {
            Ordering::EpochBeforeInit => "MPI_T epoch before MPI_Init",
            Ordering::EpochInsideInit => "MPI_T epoch inside MPI_Init..MPI_Finalize",
            Ordering::EpochSpanningInit => {
                "MPI_T epoch across MPI_Init, closed before MPI_Finalize"
            }
            Ordering::EpochSpanningFinalize => {
                "MPI_T epoch opened after MPI_Init, across MPI_Finalize"
            }
            Ordering::EpochSpanningBoth => "MPI_T epoch across MPI_Init and MPI_Finalize",
            Ordering::EpochAfterFinalize => "MPI_T epoch after MPI_Finalize",
            Ordering::NestedEpochsAroundInit => "two nested MPI_T inits across MPI_Init",
            Ordering::ReinitInsideInit => "MPI_T re-initialised inside MPI_Init..MPI_Finalize",
        }
    }

    fn steps(self) -> &'static [Step] {
        use Step::*;
        match self {
            Ordering::EpochBeforeInit => &[TInit, TQuery, TFinalize, Init, Finalize],
            Ordering::EpochInsideInit => &[Init, TInit, TQuery, TFinalize, Finalize],
            Ordering::EpochSpanningInit => &[TInit, TQuery, Init, TQuery, TFinalize, Finalize],
            Ordering::EpochSpanningFinalize => &[Init, TInit, TQuery, Finalize, TQuery, TFinalize],
            Ordering::EpochSpanningBoth => &[TInit, Init, Finalize, TQuery, TFinalize],
            Ordering::EpochAfterFinalize => &[Init, Finalize, TInit, TQuery, TFinalize],
            Ordering::NestedEpochsAroundInit => {
                &[TInit, TInit, Init, TFinalize, TQuery, TFinalize, Finalize]
            }
            Ordering::ReinitInsideInit => {
                &[Init, TInit, TFinalize, TInit, TQuery, TFinalize, Finalize]
            }
        }
    }

    /// Why the test fails when this ordering does not succeed; `None` for orderings whose
    /// failure is reported as a finding about the implementation only.
    fn required(self) -> Option<&'static str> {
        match self {
            Ordering::EpochInsideInit => Some(
                "the standard's plain nesting (MPI_T used between MPI_Init and MPI_Finalize) must \
                 work on every implementation",
            ),
            Ordering::EpochSpanningInit => Some(
                "mpit-safe documents this ordering (one MPI_T epoch across MPI_Init, closed \
                 before MPI_Finalize) as the safe one",
            ),
            _ => None,
        }
    }

    fn from_key(key: &str) -> Option<Ordering> {
        Ordering::ALL.into_iter().find(|o| o.key() == key)
    }

    /// The steps as one comma-separated string.
    fn steps_text(self) -> String {
        self.steps()
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(",")
    }
}

// ---------------------------------------------------------------------------------------------
// The child.

/// Prints one progress line and flushes it, so the parent sees it even if the next call crashes.
fn say(line: &str) {
    child::say(&format!("{TAG} {line}"));
}

/// Performs the steps of the ordering `spec` names (`MODE:KEY`) and exits the process: 0 if
/// every step succeeded, [`EXIT_STEP_ERROR`] at the first that did not.
///
/// In [`Mode::Safe`] the tokens left on the stack at exit (none: every ordering balances its
/// initialisations) and the anchor are not finalised: `exit` runs no destructors.
fn run_child(spec: &str) -> ! {
    let parsed = spec
        .split_once(':')
        .and_then(|(mode, key)| Some((Mode::from_name(mode)?, Ordering::from_key(key)?)));
    let Some((mode, ordering)) = parsed else {
        eprintln!("{CHILD_ENV}={spec:?} names no mode and ordering (MODE:KEY)");
        std::process::exit(EXIT_USAGE);
    };
    say(&format!(
        "start {} {} {}",
        mode.name(),
        ordering.key(),
        ordering.steps_text()
    ));
    let mut tokens = Vec::new();
    for (i, &step) in ordering.steps().iter().enumerate() {
        say(&format!("begin {i} {}", step.name()));
        let r = step.run(mode, &mut tokens);
        let error = r
            .error
            .map(|e| format!("{ERROR_FIELD}{}", e.replace('\n', " ")))
            .unwrap_or_default();
        say(&format!(
            "end {i} {} rc={}{}{error}",
            step.name(),
            r.rc,
            r.out
        ));
        if r.rc != MPI_SUCCESS {
            // MPI may be left initialised: exiting is all that is left to do.
            std::process::exit(EXIT_STEP_ERROR);
        }
    }
    say("done");
    std::process::exit(0);
}

/// Starts the rest of an `end` progress line that is the safe API's error message.
const ERROR_FIELD: &str = " error=";

// ---------------------------------------------------------------------------------------------
// The parent.

/// How a child ended.
#[derive(Debug)]
enum Outcome {
    /// Every step returned `MPI_SUCCESS` and the process exited with 0.
    Ok,
    /// A step returned an error code (with the safe API's message, in [`Mode::Safe`]).
    Error {
        step: usize,
        call: Step,
        rc: c_int,
        message: Option<String>,
    },
    /// The process was killed by a signal.
    Crash {
        signal: i32,
        core_dumped: bool,
        at: String,
    },
    /// The process exited with an unexpected code (an MPI error handler or abort, say).
    Exit { code: i32, at: String },
    /// The process did not end within the timeout and was killed.
    Hang { after: Duration, at: String },
}

impl Outcome {
    fn kind(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error { .. } => "error",
            Outcome::Crash { .. } => "crash",
            Outcome::Exit { .. } => "exit",
            Outcome::Hang { .. } => "hang",
        }
    }

    fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok)
    }

    /// One line of details; empty for `Ok`.
    fn detail(&self, mode: Mode) -> String {
        match self {
            Outcome::Ok => String::new(),
            Outcome::Error {
                step,
                call,
                message: Some(message),
                ..
            } => format!(
                "step {step} ({}: {}) returned Err: {message}",
                call.name(),
                call.call(mode),
            ),
            Outcome::Error {
                step,
                call,
                rc,
                message: None,
            } => format!(
                "step {step} ({}: {}) returned {rc}{}",
                call.name(),
                call.call(mode),
                error_name(*rc)
                    .map(|n| format!(" = {n}"))
                    .unwrap_or_default()
            ),
            Outcome::Crash {
                signal,
                core_dumped,
                at,
            } => format!(
                "{}{} {at}",
                signal_name(*signal),
                if *core_dumped { " (core dumped)" } else { "" }
            ),
            Outcome::Exit { code, at } => format!("exit code {code} {at}"),
            Outcome::Hang { after, at } => format!("killed after {}s {at}", after.as_secs()),
        }
    }
}

/// The names of the error codes MPI_T initialisation and queries are likely to return.
fn error_name(rc: c_int) -> Option<&'static str> {
    [
        (MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED"),
        (MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT"),
        (MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY"),
        (MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX"),
    ]
    .into_iter()
    .find(|&(code, _)| code == rc)
    .map(|(_, name)| name)
}

/// The Linux name of a signal that typically ends a crashing MPI process.
fn signal_name(signal: i32) -> String {
    match child::signal_name(signal) {
        Some(name) => format!("{name} (signal {signal})"),
        None => format!("signal {signal}"),
    }
}

/// What the parent learnt from one child.
#[derive(Debug)]
struct Report {
    mode: Mode,
    ordering: Ordering,
    outcome: Outcome,
    /// The `MPI_T_cvar_get_num` results, in order.
    cvars: Vec<i64>,
    /// The child's exit status (`None` if it hung).
    status: Option<ExitStatus>,
    /// The child's whole stderr (where MPI reports its crashes), for the findings.
    stderr: String,
}

impl Report {
    fn detail(&self) -> String {
        self.outcome.detail(self.mode)
    }

    /// `(key) label [steps]: kind: detail`, the body of a finding.
    fn summary(&self) -> String {
        format!(
            "({}) {} [{}]: {}: {}",
            self.ordering.key(),
            self.ordering.label(),
            self.ordering.steps_text(),
            self.outcome.kind(),
            self.detail()
        )
    }

    /// The first lines of the child's stderr, indented, or nothing if it wrote none.
    fn stderr_lines(&self) -> String {
        let err = head(&self.stderr, 10);
        if err.is_empty() {
            return String::new();
        }
        format!(
            "  child's stderr (first lines):\n    {}\n",
            err.replace('\n', "\n    ")
        )
    }
}

/// The child's progress, parsed from its stdout.
#[derive(Debug)]
struct Progress {
    mode: Mode,
    started: bool,
    /// The last step begun: index and step.
    begun: Option<(usize, Step)>,
    /// The last step ended: index and step.
    ended: Option<(usize, Step)>,
    /// The first step that returned an error: index, step, code, the safe API's message.
    failed: Option<(usize, Step, c_int, Option<String>)>,
    cvars: Vec<i64>,
    done: bool,
}

impl Progress {
    fn parse(stdout: &str, mode: Mode) -> Progress {
        let mut p = Progress {
            mode,
            started: false,
            begun: None,
            ended: None,
            failed: None,
            cvars: Vec::new(),
            done: false,
        };
        for line in stdout.lines() {
            // The harness may have printed `test NAME ... ` on the same line before the tag.
            let Some((_, rest)) = line.split_once(TAG) else {
                continue;
            };
            // The safe API's message, if any, is the rest of the line; the fields come before.
            let (rest, message) = match rest.split_once(ERROR_FIELD) {
                Some((fields, message)) => (fields, Some(message.trim().to_owned())),
                None => (rest, None),
            };
            let words: Vec<&str> = rest.split_whitespace().collect();
            let step = || {
                let i = words.get(1)?.parse::<usize>().ok()?;
                Some((i, Step::from_name(words.get(2)?)?))
            };
            let field = |key: &str| {
                words
                    .iter()
                    .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                    .and_then(|v| v.parse::<i64>().ok())
            };
            match words.first().copied() {
                Some("start") => p.started = true,
                Some("begin") => p.begun = step(),
                Some("end") => {
                    p.ended = step();
                    if let (Some((i, s)), Some(rc)) = (p.ended, field("rc"))
                        && rc != i64::from(MPI_SUCCESS)
                        && p.failed.is_none()
                    {
                        p.failed = Some((i, s, rc as c_int, message.clone()));
                    }
                    if let Some(n) = field("cvars") {
                        p.cvars.push(n);
                    }
                }
                Some("done") => p.done = true,
                _ => {}
            }
        }
        p
    }

    /// Where the child was: in a step it began but did not end, after its last step, or at exit.
    fn at(&self) -> String {
        if self.done {
            return "at process exit, after all steps succeeded".to_owned();
        }
        match (self.begun, self.ended) {
            (Some((b, s)), e) if e.map(|(i, _)| i) != Some(b) => {
                format!("in step {b} ({}: {})", s.name(), s.call(self.mode))
            }
            (_, Some((i, s))) => format!("after step {i} ({})", s.name()),
            _ => "before the first step".to_owned(),
        }
    }
}

fn timeout() -> Duration {
    child::timeout_from_env("MPIT_ORDERING_TIMEOUT_SECS", DEFAULT_TIMEOUT)
}

/// Runs one ordering in a child process in `mode` and classifies how it ended.
fn run_ordering(mode: Mode, ordering: Ordering, timeout: Duration) -> Report {
    let mut cmd = child::test_command(
        mode.test_name(),
        CHILD_ENV,
        &format!("{}:{}", mode.name(), ordering.key()),
    );
    let run =
        child::run::<Text, Text>(&mut cmd, timeout).expect("spawn the test binary as a child");
    let (Text(stdout), Text(stderr)) = (run.stdout, run.stderr);
    let status = run.status;

    let progress = Progress::parse(&stdout, mode);
    // A harness that ran no test exits with 0 without a word from the child.
    assert!(
        progress.started || status.is_none_or(|s| s.code() != Some(0)),
        "the {} child for ordering ({}) ran no steps: does Mode::test_name ({}) name the test \
         function?\nstdout:\n{stdout}\nstderr:\n{stderr}",
        mode.name(),
        ordering.key(),
        mode.test_name(),
    );
    let outcome = match run.ended {
        Ended::Timeout(after) => Outcome::Hang {
            after,
            at: progress.at(),
        },
        _ if progress.failed.is_some() => {
            let (step, call, rc, message) = progress.failed.clone().unwrap();
            Outcome::Error {
                step,
                call,
                rc,
                message,
            }
        }
        Ended::Signal {
            signal,
            core_dumped,
        } => Outcome::Crash {
            signal,
            core_dumped,
            at: progress.at(),
        },
        Ended::Exit(0) if progress.done => Outcome::Ok,
        Ended::Exit(code) => Outcome::Exit {
            code,
            at: progress.at(),
        },
    };
    Report {
        mode,
        ordering,
        outcome,
        cvars: progress.cvars,
        status,
        stderr,
    }
}

/// `s` as a JSON string literal.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The first `n` lines of `s` (where MPI says what went wrong), for findings and the JSON record.
fn head(s: &str, n: usize) -> String {
    s.lines().take(n).collect::<Vec<_>>().join("\n")
}

/// One JSON object (one line) per report.
fn json_line(r: &Report) -> String {
    let steps = r
        .ordering
        .steps()
        .iter()
        .map(|s| json_str(s.name()))
        .collect::<Vec<_>>()
        .join(",");
    let cvars = r
        .cvars
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let status = match r.status {
        Some(s) => json_str(&s.to_string()),
        None => "null".to_owned(),
    };
    format!(
        "{{\"implementation\":{},\"version\":{},\"api\":{},\"ordering\":{},\"label\":{},\
         \"steps\":[{steps}],\"outcome\":{},\"detail\":{},\"required\":{},\"status\":{status},\
         \"cvars\":[{cvars}],\"stderr_head\":{}}}",
        json_str(IMPLEMENTATION),
        json_str(IMPLEMENTATION_VERSION),
        json_str(r.mode.name()),
        json_str(r.ordering.key()),
        json_str(r.ordering.label()),
        json_str(r.outcome.kind()),
        json_str(&r.detail()),
        r.ordering.required().is_some(),
        json_str(&head(&r.stderr, 40)),
    )
}

/// `IMPLEMENTATION` as a file-name part: `Open MPI` -> `open-mpi`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The outcome table of this implementation in `reports`' mode.
fn table(mode: Mode, reports: &[Report]) -> String {
    let w_label = reports
        .iter()
        .map(|r| r.ordering.label().len())
        .max()
        .unwrap_or(0);
    let w_steps = reports
        .iter()
        .map(|r| r.ordering.steps_text().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} on {IMPLEMENTATION} {IMPLEMENTATION_VERSION}:",
        mode.title()
    );
    let _ = writeln!(
        out,
        "    {:<w_label$}  {:<w_steps$}  outcome",
        "ordering", "steps"
    );
    for r in reports {
        let detail = r.detail();
        let cvars = if r.cvars.is_empty() {
            String::new()
        } else {
            format!(" [cvars {:?}]", r.cvars)
        };
        let _ = writeln!(
            out,
            "({}) {:<w_label$}  {:<w_steps$}  {}{}{cvars}",
            r.ordering.key(),
            r.ordering.label(),
            r.ordering.steps_text(),
            r.outcome.kind(),
            if detail.is_empty() {
                String::new()
            } else {
                format!(": {detail}")
            },
        );
    }
    out
}

/// Runs every ordering in `mode`, one child at a time.
fn run_all(mode: Mode) -> Vec<Report> {
    let timeout = timeout();
    Ordering::ALL
        .into_iter()
        .map(|o| run_ordering(mode, o, timeout))
        .collect()
}

/// The raw orderings' reports, run once per test process for both tests (the one that comes
/// second waits for them), so the safe test compares with raw outcomes of the same run.
fn raw_reports() -> &'static [Report] {
    static RAW: OnceLock<Vec<Report>> = OnceLock::new();
    RAW.get_or_init(|| run_all(Mode::Raw))
}

/// Writes `reports` as JSON lines to `$CARGO_TARGET_TMPDIR`; returns the line saying where.
fn write_jsonl(mode: Mode, reports: &[Report]) -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(mode.jsonl_name());
    let jsonl: String = reports.iter().map(|r| json_line(r) + "\n").collect();
    std::fs::write(&path, jsonl).expect("write the JSON lines");
    format!("written to {}\n", path.display())
}

/// The test with raw MPI_T calls: as the child, one ordering; as the parent, all of them,
/// reported and checked.
#[test]
fn mpi_t_orderings_around_mpi_init() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        run_child(&spec);
    }
    let reports = raw_reports();

    // One print, so the other test's output does not interleave with this one's.
    let mut out = table(Mode::Raw, reports);
    out += &write_jsonl(Mode::Raw, reports);

    // Every ordering that does not succeed is a finding; only the required ones fail the test.
    let mut failures = Vec::new();
    for r in reports.iter().filter(|r| !r.outcome.is_ok()) {
        let finding = r.summary();
        let _ = writeln!(
            out,
            "\nFINDING on {IMPLEMENTATION} {IMPLEMENTATION_VERSION}: implementation deviates from \
             the standard (MPI-4.1 §16.3.4 allows this ordering): {finding}"
        );
        out += &r.stderr_lines();
        if let Some(why) = r.ordering.required() {
            failures.push(format!("{finding}\n  required because {why}"));
        }
    }
    print!("{out}");
    assert!(
        failures.is_empty(),
        "{IMPLEMENTATION} {IMPLEMENTATION_VERSION} fails an ordering mpit-safe relies on:\n{}",
        failures.join("\n")
    );
}

/// The test with MPI_T through mpit-safe's [`Mpit`] tokens: as the child, one ordering; as the
/// parent, all of them, reported and compared with the raw outcomes of the same run.
#[test]
fn safe_api_orderings_around_mpi_init() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        run_child(&spec);
    }
    let raw = raw_reports();
    let safe = run_all(Mode::Safe);

    // One print, so the other test's output does not interleave with this one's.
    let mut out = table(Mode::Safe, &safe);
    out += &write_jsonl(Mode::Safe, &safe);

    // Every ordering that does not succeed through the safe API is a finding; the test fails if
    // a required one fails, or one that succeeds raw (the anchor must never make things worse).
    let mut failures = Vec::new();
    for (r, s) in raw.iter().zip(&safe) {
        assert_eq!(
            r.ordering, s.ordering,
            "both modes run Ordering::ALL in order"
        );
        if s.outcome.is_ok() {
            continue;
        }
        let finding = s.summary();
        let _ = writeln!(
            out,
            "\nFINDING (safe API) on {IMPLEMENTATION} {IMPLEMENTATION_VERSION}: {finding} \
             (raw: {})",
            r.outcome.kind()
        );
        out += &s.stderr_lines();
        if let Some(why) = s.ordering.required() {
            failures.push(format!("{finding}\n  required because {why}"));
        }
        if r.outcome.is_ok() {
            failures.push(format!(
                "{finding}\n  succeeds with raw MPI_T calls: the safe API must not make an \
                 ordering fail"
            ));
        }
    }

    let _ = writeln!(
        out,
        "\nraw -> safe API on {IMPLEMENTATION} {IMPLEMENTATION_VERSION}:"
    );
    for (r, s) in raw.iter().zip(&safe) {
        let verdict = match (r.outcome.is_ok(), s.outcome.is_ok()) {
            (true, true) => "",
            (false, true) => "  (fixed by the safe API)",
            (false, false) => "  (fails either way)",
            (true, false) => "  (WORSE through the safe API)",
        };
        let _ = writeln!(
            out,
            "({}) {:<5} -> {:<5}{verdict}",
            r.ordering.key(),
            r.outcome.kind(),
            s.outcome.kind()
        );
    }
    print!("{out}");
    assert!(
        failures.is_empty(),
        "{IMPLEMENTATION} {IMPLEMENTATION_VERSION} fails through the safe API:\n{}",
        failures.join("\n")
    );
}
