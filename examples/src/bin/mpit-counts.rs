//! `mpit-counts`: the MPI_T counts before and after `MPI_Init` (see [`mpit_examples::counts`]
//! for the options, the output and the exit status).

use clap::Parser;
use mpit_examples::counts::{Args, run};

fn main() -> std::process::ExitCode {
    run(&Args::parse())
}
