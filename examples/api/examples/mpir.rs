//! MPIR process acquisition (DelSignore, "The MPIR Interfaces", 2010), both sides in one
//! program. As a starter (mpir-types' `starter` feature, §2.2.2.2) it starts N copies of
//! `sleep`, publishes their process table (§2.8.2) and raises `MPIR_DEBUG_SPAWNED` through
//! `MPIR_Breakpoint`; then, as a tool would, it reads that table back through the tool side
//! (the attach model, §2.5.1: the starter's symbols and memory, here its own). With
//! `--pid PID` it is the tool only, reading the job of a running starter such as Open MPI
//! 4.1's `mpiexec` (MPICH's Hydra implements no MPIR, and the error says so).
//!
//! Run: `cargo run -p mpit-api-examples --example mpir [-- -n N | --pid PID]`.
use std::path::Path;
use std::process::{Child, Command};

use mpir_types::os::attach;
use mpir_types::starter::{ProcEntry, Starter};
use mpir_types::{DebugState, Symbol};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut children: Vec<Child> = Vec::new();
    let starter = match args.as_slice() {
        [flag, pid] if flag == "--pid" => pid.parse()?,
        rest => {
            let n = match rest {
                [flag, n] if flag == "-n" => n.parse()?,
                _ => 2,
            };
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")?;
            let sleep = ["/bin/sleep", "/usr/bin/sleep"]
                .map(Path::new)
                .into_iter()
                .find(|p| p.exists());
            let sleep = sleep.ok_or("no sleep program")?;
            for _ in 0..n {
                children.push(Command::new(sleep).arg("30").spawn()?);
            }
            let table: Vec<ProcEntry> = children
                .iter()
                .map(|c| ProcEntry::new(host.trim(), sleep, c.id()))
                .collect();
            Starter::publish(&table)?;
            Starter::debug_event(DebugState::Spawned); // a tool under ptrace stops here
            for (rank, c) in children.iter().enumerate() {
                println!("started rank {rank} pid {}", c.id());
            }
            i32::try_from(std::process::id())?
        }
    };
    let result = attach(starter); // never stops the starter, writes nothing
    for mut c in children {
        c.kill()?;
        c.wait()?;
    }
    let job = result?;
    let breakpoint = job
        .locate(Symbol::Breakpoint)
        .map(|s| s.object_path.display().to_string());
    println!(
        "starter {}: {} ranks, {:?}, MPIR_Breakpoint in {}",
        job.starter_pid,
        job.procs.len(),
        job.debug_state,
        breakpoint.unwrap_or_default()
    );
    for (rank, p) in job.ranks() {
        println!(
            "rank {rank} host {} executable {} pid {}",
            p.host_name, p.executable_name, p.pid
        );
    }
    Ok(())
}
