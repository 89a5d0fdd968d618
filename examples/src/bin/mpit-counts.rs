//! `mpit-counts`: the MPI_T counts before and after `MPI_Init` (see [`mpit_tools::counts`]
//! for the options, the output and the exit status).

use clap::Parser;
use mpit_tools::counts::{Args, run};

fn main() -> std::process::ExitCode {
    run(&Args::parse())
}
