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
//! Each process is read into a [`model::ProcessDump`] (the `--json` document's entry), which
//! [`text::render`] turns into text. What stopped the dump of a process goes to standard error
//! ([`text::error`]), in both modes (the JSON document keeps it too, as the process's `error`).
//!
//! Exit status: 0 when every process was dumped (and the command, if any, exited 0); 1 when a
//! process could not be read, the command could not be run or failed; 2 on a usage error
//! (including nothing to dump: no `--pid`, `--starter` or command).

pub mod model;
pub mod text;

use std::path::PathBuf;

use clap::{ArgGroup, Parser};

use self::model::Dump;

/// Exit statuses, as `--help` lists them.
const EXIT_STATUS: &str = "Exit status: 0 when every process was dumped (and the command, if \
                           any, exited 0); 1 when a process could not be read, or the command \
                           could not be run or failed; 2 on a usage error (including nothing to \
                           dump). Errors go to standard error.";

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
    use std::process::{Command, ExitCode};
    use std::time::Duration;

    use mqd_types::live::{
        LiveImage, LiveProcess, TypeSources, add_ob1_unexpected, dll_candidates, find_dll,
    };
    use mqd_types::{Dll, Image, OpClass};

    use super::Args;
    use super::model::{CommunicatorDump, DonorCheck, Dump, ProcessDump};

    /// The tool: launches the command if there is one, dumps each process (text as it goes,
    /// or one JSON document at the end), waits for the command.
    pub fn run(args: &Args) -> ExitCode {
        let mut child = None;
        let mut starter = args.starter;
        if let Some((program, rest)) = args.command.split_first() {
            match Command::new(program).args(rest).spawn() {
                Ok(c) => {
                    starter = Some(c.id() as i32);
                    child = Some(c);
                }
                Err(e) => {
                    eprintln!("mqd-dump: cannot run {program}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            std::thread::sleep(Duration::from_secs_f64(args.delay.max(0.0)));
        }
        let mut pids = args.pids.clone();
        if let Some(s) = starter.filter(|_| pids.is_empty()) {
            match mpir_types::os::attach(s) {
                Ok(acq) => pids.extend(acq.ranks().map(|(_, d)| d.pid as i32)),
                Err(e) => eprintln!("mqd-dump: reading the starter {s}'s process table: {e}"),
            }
        }
        let mut ok = !pids.is_empty();
        if pids.is_empty() {
            eprintln!("mqd-dump: no process to dump (give --pid, --starter or a command)");
        }
        let mut dump = Dump {
            processes: Vec::new(),
        };
        for &pid in &pids {
            let p = process(pid, starter, args);
            ok &= p.error.is_none();
            if let Some(e) = super::text::error(&p) {
                eprint!("{e}");
            }
            if args.json {
                dump.processes.push(p);
            } else {
                print!("{}", super::text::render(&p));
            }
        }
        if args.json {
            println!("{}", dump.json());
        }
        if let Some(mut c) = child {
            match c.wait() {
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
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }

    /// What could be read of `pid`; an error ends the reading and is kept.
    fn process(pid: i32, starter: Option<i32>, args: &Args) -> ProcessDump {
        let mut p = ProcessDump {
            pid,
            rank: mqd_types::live::rank_from_environment(pid),
            ..ProcessDump::default()
        };
        if let Err(e) = read_into(pid, starter, args, &mut p) {
            p.error = Some(e.to_string());
        }
        p
    }

    fn read_into(
        pid: i32,
        starter: Option<i32>,
        args: &Args,
        p: &mut ProcessDump,
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
        let mut comms = process.queues(&OpClass::ALL)?;
        add_ob1_unexpected(&symbols, &LiveProcess::new(pid)?, &mut comms);
        p.communicators = Some(comms.iter().map(CommunicatorDump::from).collect());
        Ok(())
    }
}
