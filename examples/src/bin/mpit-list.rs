//! `mpit-list`: everything the installed MPI exposes through MPI_T, as a category tree (see
//! [`mpit_tools::list`] for the options and the output).
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use mpit_tools::list::{Args, run};

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpit-list: {e}");
            ExitCode::FAILURE
        }
    }
}
