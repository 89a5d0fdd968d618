//! `mqd-dump`: the communicators and message queues of live MPI processes, through the MPI
//! implementation's own message queue DLL (Open MPI: `libompi_dbg_msgq.so`).
//!
//! ```text
//! mqd-dump --pid PID [--pid PID ...]         # ranks of a running job
//! mqd-dump --starter PID                     # every rank of the job of a running mpiexec
//! mqd-dump --delay 2 -- mpiexec.openmpi --mca pml ob1 -n 2 ./app
//!                                            # launch, dump after 2 s, wait for the job
//! ```
//!
//! The DLL is found by section 5's search (the starter's `mpimsgq_dll_locations`, the MPI
//! process's, then `MPIR_dll_name`) unless `--dll` names it. Types come from the libraries'
//! debug info if they have it, else from mqd-types' Open MPI type donor. `--json` prints one
//! JSON document instead of text (schema: `examples/schemas/mqd-dump.schema.json`).
//!
//! Where the DLL has no information on the unexpected messages (Open MPI 4.1's DLL never has),
//! mqd-types reads them itself from the ob1 PML's structures (types from its ob1 type donor)
//! and the dump says so: `read by mqd-types from ob1's structures`.
//!
//! Before anything of a process is shown, its PML is read ([`mqd_types::pml`]): Open MPI's
//! DLL reads every request as ob1 lays it out, so under another PML (`cm`, `ucx`) its queues
//! are garbage. Such a process is refused: nothing of its queues is printed, the reason (naming
//! the PML) goes to standard error and the document keeps it as the process's `refused`. The
//! monitoring PML, which stacks itself over another, is seen through (`monitoring over ob1` is
//! shown). Ranks and tags are shown as the DLL gave them, special values by name
//! (`MPI_ANY_SOURCE`, `MPI_PROC_NULL`, `MPI_ANY_TAG`; Open MPI's DLL zero-extends a C `int`,
//! so the `--json` document has -1 as 4294967295); what the DLL does not give is shown as
//! unknown (`?`, `null`, `no information from the DLL`).
//!
//! Each process is read into a [`model::ProcessDump`] (the `--json` document's entry), which
//! [`text::render`] turns into text. What stopped the dump of a process goes to standard error
//! ([`text::error`]), in both modes (the JSON document keeps it too, as the process's `error`).
//! With a command, the job's standard output and error go to the tool's standard error (or the
//! file `--job-output` names), so that standard output has the dump alone.
//!
//! Exit status ([`EXIT_STATUS`]): 0 when every process was dumped (and the command, if any,
//! exited 0); 2 on a usage error (including nothing to dump: no `--pid`, `--starter` or
//! command); else the first that applies of: 130 or 143 (128 + the signal's number) when a
//! `SIGINT` or `SIGTERM` stopped the tool; 3 when a process was refused (its PML's queues
//! cannot be shown); 6 when a process (or the starter) did not exist, was a zombie, or ended
//! while it was read (nothing of its queues is shown); 1 when a process could not be read
//! otherwise, the starter's table could not be read or was empty, or the command could not be
//! run or failed.
//!
//! A process that ends while it is read (a rank killed meanwhile) is checked for after its
//! read, whatever the read gave: its queues are dropped, not shown as if complete, and
//! standard error says `process PID ended while it was read`.
//!
//! Signals: a `SIGINT` or `SIGTERM` stops the dump before the next process, and nothing more
//! is printed (the text of the processes dumped before it stays on standard output; the
//! `--json` document is not printed at all), standard error says what is missing. With a
//! command, the signal is forwarded to it (unless it came from the terminal, which sent it to
//! the command too), and the tool waits for it to end. A second signal ends the tool at once.
//!
//! `MQD_DUMP_TEST_PAUSE=PID` (test-only, for `examples/tests/faults.rs`): the tool pauses
//! right before it reads the queues of process PID (its DLL, image and types are set up),
//! writing `mqd-dump: test pause: ...` to standard error and waiting, for at most 10 s, for a
//! line (or the end) of standard input or a caught signal.

pub mod model;
pub mod text;

use std::path::PathBuf;

use clap::{ArgGroup, Parser};

use self::model::Dump;

/// Exit statuses, as `--help` lists them.
pub const EXIT_STATUS: &str = "Exit status: 0 when every process was dumped (and the command, if \
                           any, exited 0); 2 on a usage error (including nothing to dump); else \
                           the first that applies of: 130 (SIGINT) or 143 (SIGTERM) when a \
                           signal stopped the tool (nothing more is printed; with a command, \
                           the signal is forwarded to it, unless it came from the terminal, \
                           and the tool waits for it); 3 when a process was refused: its PML is \
                           not one whose queues the DLL shows (Open MPI: ob1, also under \
                           monitoring), or it could not be told; 6 when a process (or the \
                           starter) did not exist, was a zombie, or ended while it was read; 1 \
                           when a process could not be read otherwise, the starter's process \
                           table could not be read or was empty, or the command could not be \
                           run or failed. Errors go to standard error; the command's output \
                           too (or to --job-output).";

/// The exit status of a run where a process was refused.
pub const REFUSED: u8 = 3;

/// The exit status of a run where a process did not exist, was a zombie or ended while it
/// was read.
pub const GONE: u8 = 6;

/// `MQD_DUMP_TEST_PAUSE`: the test-only pause before the queues of a process (see the module
/// documentation).
pub const TEST_PAUSE: &str = "MQD_DUMP_TEST_PAUSE";

/// Print the communicators and message queues of live MPI processes.
#[derive(Parser, Debug)]
#[command(
    name = "mqd-dump",
    version,
    after_help = EXIT_STATUS,
    group(ArgGroup::new("what").required(true).multiple(true).args(["pids", "starter", "command"]))
)]
pub struct Args {
    /// An MPI process to dump (repeatable).
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<i32>,
    /// The job's starter (mpiexec): its ranks are dumped (from its MPIR process table)
    /// and its `mpimsgq_dll_locations` is searched first.
    #[arg(long)]
    pub starter: Option<i32>,
    /// Load this DLL instead of searching for it.
    #[arg(long)]
    pub dll: Option<PathBuf>,
    /// Do not use the Open MPI type donor (only the libraries' own debug info).
    #[arg(long)]
    pub no_donor: bool,
    /// With a command: seconds to wait before dumping.
    #[arg(long, default_value_t = 2.0)]
    pub delay: f64,
    /// Print one JSON document (schema: examples/schemas/mqd-dump.schema.json).
    #[arg(long)]
    pub json: bool,
    /// With a command: write its standard output and error to this file (default: the tool's
    /// standard error).
    #[arg(long, value_name = "FILE")]
    pub job_output: Option<PathBuf>,
    /// A command to launch (an MPI starter), dumped after `--delay` seconds.
    #[arg(last = true)]
    pub command: Vec<String>,
}

impl Dump {
    /// The `--json` document, on one line (with no final newline).
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    /// The text of every process (standard output).
    pub fn text(&self) -> String {
        self.processes.iter().map(text::render).collect()
    }

    /// The error lines of the processes that could not be read (standard error).
    pub fn errors(&self) -> String {
        self.processes.iter().filter_map(text::error).collect()
    }
}

#[cfg(target_os = "linux")]
pub use self::live::run;

#[cfg(not(target_os = "linux"))]
/// The tool: Linux only (it reads live processes through `/proc`).
pub fn run(_: &Args) -> std::process::ExitCode {
    eprintln!("mqd-dump reads live processes through /proc: Linux only");
    std::process::ExitCode::from(2)
}

#[cfg(target_os = "linux")]
mod live {
    use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
    use std::time::{Duration, Instant};

    use mpir_types::os::{Interrupts, ToolError, check_alive, ended};

    use mqd_types::live::{
        LiveImage, LiveProcess, TypeSources, add_ob1_unexpected, dll_candidates, find_dll,
        open_mpi_pml,
    };
    use mqd_types::{Dll, Image, MqdError, OpClass};

    use super::Args;
    use super::model::{CommunicatorDump, DonorCheck, Dump, ProcessDump};

    /// The tool: launches the command if there is one, dumps each process (text as it goes,
    /// or one JSON document at the end), waits for the command.
    pub fn run(args: &Args) -> ExitCode {
        let interrupts = match Interrupts::catch() {
            Ok(i) => i,
            Err(e) => {
                eprintln!("mqd-dump: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut child = None;
        let mut starter = args.starter;
        if let Some((program, rest)) = args.command.split_first() {
            let streams = crate::mpir::job_output(args.job_output.as_deref());
            let spawned = streams.and_then(|(out, err)| {
                Command::new(program)
                    .args(rest)
                    .stdout(Stdio::from(out))
                    .stderr(Stdio::from(err))
                    .spawn()
                    .map_err(|e| format!("cannot run {program}: {e}"))
            });
            match spawned {
                Ok(c) => {
                    starter = Some(c.id() as i32);
                    child = Some(c);
                }
                Err(e) => {
                    eprintln!("mqd-dump: {e}");
                    return ExitCode::FAILURE;
                }
            }
            // The delay, in slices: a caught signal ends it (and is forwarded).
            let deadline = Instant::now() + Duration::from_secs_f64(args.delay.max(0.0));
            while interrupts.caught().is_none() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
        }
        let mut pids = args.pids.clone();
        let mut ok = true;
        let mut gone = false;
        if let Some(s) = starter.filter(|_| pids.is_empty() && interrupts.caught().is_none()) {
            match mpir_types::os::attach(s) {
                Ok(acq) if acq.procs.is_empty() => {
                    eprintln!(
                        "mqd-dump: the process table of starter {s} is empty (MPIR_debug_state \
                         {}): it has not spawned its job yet",
                        crate::mpir::model::state_name(acq.debug_state)
                    );
                    ok = false;
                }
                Ok(acq) => pids.extend(acq.ranks().map(|(_, d)| d.pid as i32)),
                // Open MPI 5: the ranks through PMIx; the queues need a DLL it lacks.
                Err(ToolError::NoMpir {
                    launcher: mpir_types::os::KnownLauncher::Prrte,
                    ..
                }) => match mpir_types::pmix::tool::attach(s, &Default::default()) {
                    Ok((jobs, _)) => {
                        let job = &jobs[0];
                        eprintln!(
                            "mqd-dump: starter {s} is PRRTE's (no MPIR symbols): its {} ranks \
                             found through PMIx (namespace {}); their queues need the MQD DLL \
                             their MPIR_dll_name names, which Open MPI 5.0.11's wheel does not \
                             ship (each rank's DLL search follows)",
                            job.procs.len(),
                            job.nspace
                        );
                        pids.extend(job.procs.iter().map(|d| d.pid as i32));
                    }
                    Err(e) => {
                        eprintln!("mqd-dump: cannot read the ranks of starter {s} via PMIx: {e}");
                        ok = false;
                    }
                },
                Err(e) => {
                    eprintln!("mqd-dump: cannot read the process table of starter {s}: {e}");
                    gone |= matches!(
                        e,
                        ToolError::NoSuchProcess { .. }
                            | ToolError::Zombie { .. }
                            | ToolError::Ended { .. }
                    );
                    ok = false;
                }
            }
        }
        if pids.is_empty() && ok && interrupts.caught().is_none() {
            eprintln!("mqd-dump: no process to dump (give --pid, --starter or a command)");
            ok = false;
        }
        let mut refused = false;
        let mut dump = Dump {
            processes: Vec::new(),
        };
        let mut dumped = 0;
        for &pid in &pids {
            if let Some(c) = &child {
                interrupts.forward_to(c.id() as i32);
            }
            if interrupts.caught().is_some() {
                break;
            }
            let (p, ended) = process(pid, starter, args, &interrupts);
            // Caught while this process was read: it is not shown.
            if interrupts.caught().is_some() {
                break;
            }
            dumped += 1;
            gone |= ended;
            ok &= p.error.is_none() && p.refused.is_none();
            refused |= p.refused.is_some();
            if let Some(e) = super::text::error(&p) {
                eprint!("{e}");
            }
            if args.json {
                dump.processes.push(p);
            } else {
                print!("{}", super::text::render(&p));
            }
        }
        if let Some(i) = interrupts.caught() {
            let done = if dumped == 0 {
                "before any process was dumped".to_owned()
            } else {
                format!("after {dumped} of {} processes", pids.len())
            };
            eprintln!(
                "mqd-dump: caught {}: stopped {done}; the dump is incomplete{}",
                i.signal,
                if args.json {
                    ": no document is printed"
                } else {
                    ""
                }
            );
        } else if args.json {
            println!("{}", dump.json());
        }
        if let Some(c) = child {
            match wait_command(c, &interrupts) {
                Ok(st) if !st.success() => {
                    eprintln!("mqd-dump: the command ended with {st}");
                    ok = false;
                }
                Ok(_) => {}
                Err(e) => {
                    eprintln!("mqd-dump: waiting for the command: {e}");
                    ok = false;
                }
            }
        }
        match (interrupts.caught(), refused, gone, ok) {
            (Some(i), ..) => ExitCode::from(i.exit_status()),
            (None, true, ..) => ExitCode::from(super::REFUSED),
            (None, false, true, _) => ExitCode::from(super::GONE),
            (None, false, false, true) => ExitCode::SUCCESS,
            (None, false, false, false) => ExitCode::FAILURE,
        }
    }

    /// Waits for the command, forwarding the caught signals to it (and saying so once).
    fn wait_command(mut c: Child, interrupts: &Interrupts) -> std::io::Result<ExitStatus> {
        let mut told = false;
        loop {
            let forwarded = interrupts.forward_to(c.id() as i32);
            if let Some(st) = c.try_wait()? {
                return Ok(st);
            }
            if let (false, Some(i)) = (told, interrupts.caught()) {
                if i.from_terminal {
                    eprintln!(
                        "mqd-dump: caught {} from the terminal, which sent it to the command \
                         (pid {}) too; waiting for it to end",
                        i.signal,
                        c.id()
                    );
                } else if let Some(sig) = forwarded {
                    eprintln!(
                        "mqd-dump: caught {sig}: forwarded to the command (pid {}); waiting \
                         for it to end",
                        c.id()
                    );
                }
                told = true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What could be read of `pid`, and whether it had ended (or did not exist) then; an
    /// error ends the reading and is kept. A process that ended while it was read keeps
    /// nothing of its queues.
    fn process(
        pid: i32,
        starter: Option<i32>,
        args: &Args,
        interrupts: &Interrupts,
    ) -> (ProcessDump, bool) {
        let mut p = ProcessDump {
            pid,
            rank: mqd_types::live::rank_from_environment(pid),
            ..ProcessDump::default()
        };
        if let Err(e) = check_alive(pid) {
            p.error = Some(e.to_string());
            return (p, true);
        }
        let read = check_pml(pid, &mut p).and_then(|refused| match refused {
            Some(why) => {
                p.refused = Some(why);
                Ok(())
            }
            None => read_into(pid, starter, args, &mut p, interrupts),
        });
        if let Err(e) = read {
            p.error = Some(e.to_string());
        }
        if let Some(e) = ended(pid, "it was read") {
            let detail = match p.error.take() {
                Some(d) => format!(" (the read gave: {d})"),
                None => String::new(),
            };
            p.error = Some(format!("{e}: none of its queues is shown{detail}"));
            p.communicators = None;
            return (p, true);
        }
        (p, false)
    }

    /// Whether the DLL can show the queues of `pid` truly: `Ok(None)` for an Open MPI process
    /// whose PML is ob1 (possibly under monitoring) or a process of another MPI (no PML to
    /// check), the reason for a refusal otherwise; an error if the process cannot be read.
    /// Records the PML in `p`.
    fn check_pml(pid: i32, p: &mut ProcessDump) -> Result<Option<String>, MqdError> {
        match open_mpi_pml(pid) {
            Ok(None) => Ok(None),
            Ok(Some(stack)) => {
                p.pml = Some(stack.components.clone());
                if stack.queues_shown_by_open_mpi_dll() {
                    return Ok(None);
                }
                Ok(Some(format!(
                    "the process runs Open MPI's PML \"{}\"{}: Open MPI's message queue DLL \
                     shows only ob1's queues (it would read {}'s requests as ob1's and show \
                     garbage); run the job with --mca pml ob1 to see its queues",
                    stack.effective(),
                    if stack.components.len() > 1 {
                        format!(
                            " (under {})",
                            stack.components[..stack.components.len() - 1].join(" over ")
                        )
                    } else {
                        String::new()
                    },
                    stack.effective()
                )))
            }
            Err(e @ MqdError::Target(_)) => Err(e),
            Err(e) => Ok(Some(format!(
                "cannot tell which PML the process runs, so whether the DLL's queues are true: {e}"
            ))),
        }
    }

    fn read_into(
        pid: i32,
        starter: Option<i32>,
        args: &Args,
        p: &mut ProcessDump,
        interrupts: &Interrupts,
    ) -> Result<(), mqd_types::MqdError> {
        let dll = match &args.dll {
            Some(path) => Dll::load(path)?,
            None => {
                p.dll_search = Some(
                    dll_candidates(starter, pid)
                        .iter()
                        .map(|c| match (&c.path, &c.note) {
                            (Some(path), _) => format!("{}: {}", c.origin, path.display()),
                            (None, n) => format!("{}: {}", c.origin, n.as_deref().unwrap_or("")),
                        })
                        .collect(),
                );
                find_dll(starter, pid)?
            }
        };
        p.dll = Some(dll.path().display().to_string());
        p.dll_version = Some(dll.version().to_owned());
        let sources = TypeSources {
            debug_info: true,
            donor: !args.no_donor,
        };
        let live = LiveImage::new(pid, sources)?;
        p.type_debug_info = Some(
            live.debug_info_sources()
                .map(|path| path.display().to_string())
                .collect(),
        );
        p.type_donor_checks = Some(
            live.donor_checks()
                .iter()
                .map(|c| DonorCheck {
                    symbol: c.symbol.to_owned(),
                    symbol_size: c.symbol_size,
                    type_name: c.type_name.to_owned(),
                    type_size: c.type_size,
                })
                .collect(),
        );
        let symbols = live.shared_symbols();
        let image = Image::new(&dll, Box::new(live))?;
        let mut process = image.process(Box::new(LiveProcess::new(pid)?))?;
        if std::env::var(super::TEST_PAUSE).is_ok_and(|v| v == pid.to_string()) {
            crate::mpir::test_pause(
                "mqd-dump",
                &format!("before the queues of process {pid}"),
                interrupts,
            );
        }
        let mut comms = process.queues(&OpClass::ALL)?;
        add_ob1_unexpected(&symbols, &LiveProcess::new(pid)?, &mut comms);
        p.communicators = Some(comms.iter().map(CommunicatorDump::from).collect());
        Ok(())
    }
}
