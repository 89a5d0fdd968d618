//! `mqd-dump`: the communicators and message queues of live MPI processes (see
//! [`mpit_tools::mqd`] for the options and the output).

use clap::Parser;
use mpit_tools::mqd::{Args, run};

fn main() -> std::process::ExitCode {
    run(&Args::parse())
}
