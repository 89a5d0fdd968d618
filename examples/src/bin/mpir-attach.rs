//! `mpir-attach`: acquire the processes of an MPI job through MPIR (see
//! [`mpit_tools::mpir`] for the options and the output).

use clap::Parser;
use mpit_tools::mpir::{Args, run};

fn main() -> std::process::ExitCode {
    run(&Args::parse())
}
