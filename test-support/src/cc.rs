//! The C compiler of the build, for the tests that compile C programs.

/// The C compiler command of the build, as words: `native`, mpit-sys's `mpicc` (pass
/// `env!("MPIT_SYS_MPICC")`, which mpit-sys's build script sets for its own crates only; empty
/// when found through pkg-config: `cc` with the probe's flags); in the ABI mode
/// (`--cfg mpit_abi`) the ABI wrapper of the MPI the tests run on, `MPIT_ABI_MPICC` (set by
/// `scripts/with-mpi abi:IMPL`).
pub fn mpicc_words(native: &str) -> Vec<String> {
    #[cfg(mpit_abi)]
    let line = {
        let _ = native;
        std::env::var("MPIT_ABI_MPICC").expect(
            "MPIT_ABI_MPICC: the C compiler for the MPI ABI (scripts/with-mpi abi:mpich5 sets it)",
        )
    };
    #[cfg(not(mpit_abi))]
    let line = native.to_owned();
    line.split_whitespace().map(str::to_owned).collect()
}
