//! `mqd-dump`: the communicators and message queues of live MPI processes (see
//! [`mpit_examples::mqd`] for the options and the output).

use clap::Parser;
use mpit_examples::mqd::{Args, run};

fn main() -> std::process::ExitCode {
    run(&Args::parse())
}
