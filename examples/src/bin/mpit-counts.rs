//! `mpit-counts`: the MPI_T counts before and after `MPI_Init` (see [`mpit_examples::counts`]).
//!
//! Usage: `mpit-counts [--kv]` (`--kv`: one line of `key=value` pairs for scripts).

fn main() -> std::process::ExitCode {
    mpit_examples::counts::run()
}
