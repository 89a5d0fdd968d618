//! What the tests that compile C programs share.

/// The C compiler command of the build, as words: its `mpicc` (empty when found through
/// pkg-config: `cc` with the probe's flags); in the ABI mode (`--cfg mpit_abi`) the ABI wrapper
/// of the MPI the tests run on, `MPIT_ABI_MPICC` (set by `scripts/with-mpi abi:IMPL`).
pub(crate) fn mpicc_words() -> Vec<String> {
    #[cfg(mpit_abi)]
    let line = std::env::var("MPIT_ABI_MPICC").expect(
        "MPIT_ABI_MPICC: the C compiler for the MPI ABI (scripts/with-mpi abi:mpich5 sets it)",
    );
    #[cfg(not(mpit_abi))]
    let line = env!("MPIT_SYS_MPICC").to_owned();
    line.split_whitespace().map(str::to_owned).collect()
}
