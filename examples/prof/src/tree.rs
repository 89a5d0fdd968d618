//! Reductions and broadcasts of bytes over a binomial tree rooted at rank 0, on `PMPI_` calls:
//! every rank merges what its children send into its own part before sending one result to
//! its parent, so no rank holds more than its children's parts at once (the shape of Caliper's
//! cross-process aggregation and of Score-P's definition unification). Used by the end of a
//! run: the profiles' reduction ([`reduce`], [`bcast`], then [`in_turn`] for `ranks.json`) and
//! the trace's global definitions. Beside them [`Pmpi`], the
//! collectives OTF2 makes while it opens and closes an archive, on the same `PMPI_` calls.

use std::mem::MaybeUninit;
use std::os::raw::c_int;

#[cfg(mpit_abi)]
use crate::abi as mpi_sys;
use mpi_sys::{MPI_Comm, MPI_Status};

use crate::glue::SUCCESS;

/// A communicator handle, as the trace writer passes it around without touching MPI.
pub(crate) type CommHandle = MPI_Comm;

/// `MPI_COMM_WORLD` (after `MPI_Init`), for the tests' MPI children.
#[cfg(test)]
pub(crate) fn comm_world() -> MPI_Comm {
    // SAFETY: a `static` of mpi-sys's C shim (the ABI build's constant), never written.
    unsafe { mpi_sys::RSMPI_COMM_WORLD }
}

/// `PMPI_Finalize`, for the tests' MPI children.
#[cfg(test)]
pub(crate) fn finalize() {
    // SAFETY: called once, after the child's MPI_Init.
    unsafe { mpi_sys::PMPI_Finalize() };
}

/// The tag of the tree's messages (on the caller's private communicator).
const TAG: c_int = 0x7472; // "tr"
/// The largest piece of one message: an `int` count of bytes.
const PIECE: usize = 1 << 30;

/// Rank `rank`'s parent in the binomial tree rooted at 0: `rank` with its lowest set bit
/// cleared.
pub(crate) fn parent(rank: usize) -> Option<usize> {
    (rank != 0).then(|| rank & (rank - 1))
}

/// Rank `rank`'s children in the binomial tree of `size` ranks, nearest first: `rank + 2^k`
/// for every `2^k` below `rank`'s lowest set bit (every power of two for rank 0).
pub(crate) fn children(rank: usize, size: usize) -> impl Iterator<Item = usize> {
    let limit = if rank == 0 {
        usize::MAX
    } else {
        rank & rank.wrapping_neg()
    };
    (0..usize::BITS)
        .map(|k| 1usize << k)
        .take_while(move |&step| step < limit)
        .map(move |step| rank + step)
        .take_while(move |&child| child < size)
}

fn rank_and_size(comm: MPI_Comm) -> (usize, usize) {
    let (mut rank, mut size) = (0, 1);
    // SAFETY: `comm` is a valid communicator; both out parameters are locals.
    unsafe {
        mpi_sys::PMPI_Comm_rank(comm, &mut rank);
        mpi_sys::PMPI_Comm_size(comm, &mut size);
    }
    (rank.max(0) as usize, size.max(1) as usize)
}

/// How two parts become one: `merge(mine, child's)`.
pub(crate) type Merge<'a> = dyn FnMut(Vec<u8>, &[u8]) -> Vec<u8> + 'a;

/// Sends `bytes` to `dest`: their length as 8 bytes, then pieces of at most [`PIECE`].
fn send(comm: MPI_Comm, dest: usize, bytes: &[u8]) -> bool {
    // SAFETY: a `const` object of mpi-sys's C shim (MPI_UINT8_T).
    let byte = unsafe { mpi_sys::RSMPI_UINT8_T };
    let len = (bytes.len() as u64).to_le_bytes();
    let mut ok = true;
    for piece in std::iter::once(&len[..]).chain(bytes.chunks(PIECE)) {
        // SAFETY: `piece.len()` (at most PIECE, an int) bytes sent from `piece`; `comm` valid.
        ok &= unsafe {
            mpi_sys::PMPI_Send(
                piece.as_ptr().cast(),
                piece.len() as c_int,
                byte,
                dest as c_int,
                TAG,
                comm,
            )
        } == SUCCESS;
    }
    ok
}

/// Receives what [`send`] sent from `source`, or `None` if a piece did not arrive.
fn recv(comm: MPI_Comm, source: usize) -> Option<Vec<u8>> {
    // SAFETY: a `const` object of mpi-sys's C shim (MPI_UINT8_T).
    let byte = unsafe { mpi_sys::RSMPI_UINT8_T };
    let into = |buf: &mut [u8]| {
        let mut status = MaybeUninit::<MPI_Status>::uninit();
        // SAFETY: `buf.len()` (at most PIECE) bytes received into `buf`; `status` is
        // written by MPI and not read; `comm` valid.
        let code = unsafe {
            mpi_sys::PMPI_Recv(
                buf.as_mut_ptr().cast(),
                buf.len() as c_int,
                byte,
                source as c_int,
                TAG,
                comm,
                status.as_mut_ptr(),
            )
        };
        code == SUCCESS
    };
    let mut len = [0u8; 8];
    if !into(&mut len) {
        return None;
    }
    let mut bytes = vec![0u8; usize::try_from(u64::from_le_bytes(len)).ok()?];
    let mut ok = true;
    for piece in bytes.chunks_mut(PIECE) {
        ok &= into(piece);
    }
    ok.then_some(bytes)
}

/// Reduces every rank's `local` bytes with `merge` (associative: `merge(mine, child's)`),
/// children in a fixed order, up to rank 0, which gets the result; the others get `None`.
/// Every rank of `comm` makes the same call. A child whose part did not arrive is left out.
pub(crate) fn reduce(comm: MPI_Comm, local: Vec<u8>, merge: &mut Merge<'_>) -> Option<Vec<u8>> {
    let (rank, size) = rank_and_size(comm);
    let mut acc = local;
    for child in children(rank, size) {
        if let Some(part) = recv(comm, child) {
            acc = merge(acc, &part);
        }
    }
    match parent(rank) {
        Some(p) => {
            send(comm, p, &acc);
            None
        }
        None => Some(acc),
    }
}

/// Every rank's `local` bytes to rank 0 one rank after the other, in rank order (its own
/// first), up the same tree: rank 0 hands each to `each` (rank, bytes) before it takes the
/// next. A rank's subtree is the ranks from it to the next of its parent's children, so its
/// stream is its own bytes, then each child's stream, nearest first; a child starts its
/// stream when its parent asks for it, and every rank forwards one rank's bytes at a time, so
/// no rank holds more than one other rank's bytes (and what MPI buffers on the way), and
/// rank 0 receives only from its children. Every rank of `comm` makes the same call; the
/// others' `each` is not called. A child whose stream breaks off ends it there.
pub(crate) fn in_turn(comm: MPI_Comm, local: Vec<u8>, each: &mut dyn FnMut(usize, Vec<u8>)) {
    let (rank, size) = rank_and_size(comm);
    let up = parent(rank);
    if let Some(p) = up
        && recv(comm, p).is_none()
    {
        return;
    }
    // An item: the rank (8 bytes) and its bytes; the end of a stream: an empty message.
    let mut emit = |from: usize, bytes: Vec<u8>| match up {
        None => each(from, bytes),
        Some(p) => {
            let mut item = (from as u64).to_le_bytes().to_vec();
            item.extend_from_slice(&bytes);
            send(comm, p, &item);
        }
    };
    emit(rank, local);
    for child in children(rank, size) {
        send(comm, child, &[]);
        while let Some(item) = recv(comm, child).filter(|m| m.len() >= 8) {
            let mut from = [0u8; 8];
            from.copy_from_slice(&item[..8]);
            emit(u64::from_le_bytes(from) as usize, item[8..].to_vec());
        }
    }
    if let Some(p) = up {
        send(comm, p, &[]);
    }
}

/// Rank 0's `bytes` on every rank, down the same tree. Every rank of `comm` makes the same
/// call; the others' `bytes` are ignored. A rank whose parent's bytes did not arrive gets
/// nothing (and passes nothing on).
pub(crate) fn bcast(comm: MPI_Comm, bytes: Option<Vec<u8>>) -> Vec<u8> {
    let (rank, size) = rank_and_size(comm);
    let mine = match parent(rank) {
        None => bytes.unwrap_or_default(),
        Some(p) => recv(comm, p).unwrap_or_default(),
    };
    // Farthest child first: its subtree is the deepest.
    let kids: Vec<usize> = children(rank, size).collect();
    for &child in kids.iter().rev() {
        send(comm, child, &mine);
    }
    mine
}

/// OTF2's collectives ([`mpit_otf2::Collectives`]) on `PMPI_` collectives over a private
/// duplicate of a communicator (so that no message of the program's is matched), in bytes.
pub(crate) struct Pmpi {
    comm: MPI_Comm,
    rank: u32,
    size: u32,
}

/// A buffer's address for MPI: never the dangling pointer of an empty slice (1, which is
/// Open MPI's `MPI_IN_PLACE`).
fn at(b: &[u8]) -> *const std::ffi::c_void {
    static NOTHING: u8 = 0;
    if b.is_empty() {
        (&NOTHING as *const u8).cast()
    } else {
        b.as_ptr().cast()
    }
}

fn at_mut(b: &mut [u8]) -> *mut std::ffi::c_void {
    if b.is_empty() {
        // Never written: MPI writes no byte of an empty receive.
        at(b).cast_mut()
    } else {
        b.as_mut_ptr().cast()
    }
}

/// Counts and displacements of byte lengths, as `int`s (`None` past 2 GiB).
fn counts(lengths: &[usize]) -> Option<(Vec<c_int>, Vec<c_int>)> {
    let mut counts = Vec::with_capacity(lengths.len());
    let mut displs = Vec::with_capacity(lengths.len());
    let mut total: c_int = 0;
    for &l in lengths {
        let l = c_int::try_from(l).ok()?;
        displs.push(total);
        counts.push(l);
        total = total.checked_add(l)?;
    }
    Some((counts, displs))
}

impl Pmpi {
    /// Over a duplicate of `comm` (`None` if MPI refuses one).
    pub(crate) fn dup(comm: MPI_Comm) -> Option<Pmpi> {
        let mut mine = comm;
        // SAFETY: MPI is initialised; `mine` is a valid out parameter.
        if unsafe { mpi_sys::PMPI_Comm_dup(comm, &mut mine) } != SUCCESS {
            return None;
        }
        let (rank, size) = rank_and_size(mine);
        Some(Pmpi {
            comm: mine,
            rank: rank as u32,
            size: size as u32,
        })
    }

    /// The private communicator.
    pub(crate) fn comm(&self) -> MPI_Comm {
        self.comm
    }
}

impl Drop for Pmpi {
    fn drop(&mut self) {
        // SAFETY: our duplicate, freed once (before MPI_Finalize: the trace is closed there).
        unsafe { mpi_sys::PMPI_Comm_free(&mut self.comm) };
    }
}

impl mpit_otf2::Collectives for Pmpi {
    fn size(&self) -> u32 {
        self.size
    }

    fn rank(&self) -> u32 {
        self.rank
    }

    fn barrier(&mut self) -> bool {
        // SAFETY: our valid communicator.
        unsafe { mpi_sys::PMPI_Barrier(self.comm) == SUCCESS }
    }

    fn bcast(&mut self, data: &mut [u8], root: u32) -> bool {
        let Ok(n) = c_int::try_from(data.len()) else {
            return false;
        };
        // SAFETY: `n` bytes at `data` on every rank; a `const` of mpi-sys's shim; our comm.
        unsafe {
            mpi_sys::PMPI_Bcast(
                at_mut(data),
                n,
                mpi_sys::RSMPI_UINT8_T,
                root as c_int,
                self.comm,
            ) == SUCCESS
        }
    }

    fn gather(&mut self, input: &[u8], output: &mut [u8], root: u32) -> bool {
        let Ok(n) = c_int::try_from(input.len()) else {
            return false;
        };
        // SAFETY: `n` bytes sent; at the root `output` holds `size * n` (OTF2's contract,
        // sliced so by the trampoline), ignored elsewhere.
        unsafe {
            mpi_sys::PMPI_Gather(
                at(input),
                n,
                mpi_sys::RSMPI_UINT8_T,
                at_mut(output),
                n,
                mpi_sys::RSMPI_UINT8_T,
                root as c_int,
                self.comm,
            ) == SUCCESS
        }
    }

    fn gatherv(&mut self, input: &[u8], output: &mut [u8], lengths: &[usize], root: u32) -> bool {
        let Ok(n) = c_int::try_from(input.len()) else {
            return false;
        };
        let at_root = self.rank == root;
        let Some((c, d)) = counts(if at_root { lengths } else { &[] }) else {
            return false;
        };
        if at_root
            && (c.len() != self.size as usize || lengths.iter().sum::<usize>() != output.len())
        {
            return false;
        }
        // SAFETY: `n` bytes sent; at the root `output` holds the sum of `c`, laid out by `d`
        // (one entry per rank each); the receive arguments are ignored elsewhere.
        unsafe {
            mpi_sys::PMPI_Gatherv(
                at(input),
                n,
                mpi_sys::RSMPI_UINT8_T,
                at_mut(output),
                c.as_ptr(),
                d.as_ptr(),
                mpi_sys::RSMPI_UINT8_T,
                root as c_int,
                self.comm,
            ) == SUCCESS
        }
    }

    fn scatter(&mut self, input: &[u8], output: &mut [u8], root: u32) -> bool {
        let Ok(n) = c_int::try_from(output.len()) else {
            return false;
        };
        // SAFETY: at the root `input` holds `size * n` bytes (ignored elsewhere); `n`
        // received into `output`.
        unsafe {
            mpi_sys::PMPI_Scatter(
                at(input),
                n,
                mpi_sys::RSMPI_UINT8_T,
                at_mut(output),
                n,
                mpi_sys::RSMPI_UINT8_T,
                root as c_int,
                self.comm,
            ) == SUCCESS
        }
    }

    fn scatterv(&mut self, input: &[u8], lengths: &[usize], output: &mut [u8], root: u32) -> bool {
        let Ok(n) = c_int::try_from(output.len()) else {
            return false;
        };
        let at_root = self.rank == root;
        let Some((c, d)) = counts(if at_root { lengths } else { &[] }) else {
            return false;
        };
        if at_root
            && (c.len() != self.size as usize || lengths.iter().sum::<usize>() != input.len())
        {
            return false;
        }
        // SAFETY: at the root `input` holds the sum of `c`, laid out by `d` (one entry per
        // rank each; ignored elsewhere); `n` bytes received into `output`.
        unsafe {
            mpi_sys::PMPI_Scatterv(
                at(input),
                c.as_ptr(),
                d.as_ptr(),
                mpi_sys::RSMPI_UINT8_T,
                at_mut(output),
                n,
                mpi_sys::RSMPI_UINT8_T,
                root as c_int,
                self.comm,
            ) == SUCCESS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_is_reached_once_within_log2_steps() {
        for size in 1..=70usize {
            let mut reached = vec![0u32; size];
            reached[0] = 1;
            for rank in 0..size {
                for child in children(rank, size) {
                    assert!(child < size && child > rank, "{rank} -> {child} of {size}");
                    assert_eq!(parent(child), Some(rank), "{child}'s parent, {size} ranks");
                    reached[child] += 1;
                }
            }
            assert!(reached.iter().all(|&n| n == 1), "{size} ranks: {reached:?}");
            let depth = (0..size)
                .map(|mut r| {
                    let mut d = 0;
                    while let Some(p) = parent(r) {
                        r = p;
                        d += 1;
                    }
                    d
                })
                .max()
                .unwrap_or(0);
            let log2 = usize::BITS - (size - 1).leading_zeros();
            let popcount = (0..size).map(|r| r.count_ones()).max().unwrap_or(0);
            assert_eq!(depth as u32, popcount, "{size} ranks");
            assert!(depth as u32 <= log2, "{size} ranks: depth {depth}");
            // A rank holds at most one part per level of the tree below it.
            let fan_in = (0..size)
                .map(|r| children(r, size).count())
                .max()
                .unwrap_or(0);
            assert_eq!(fan_in as u32, log2, "{size} ranks");
        }
    }

    const CHILD: &str = "MPIT_PROF_TREE_CHILD";

    #[test]
    fn reduce_and_bcast_on_five_ranks() {
        if std::env::var_os(CHILD).is_some() {
            // Through mpit-sys, which in the ABI build loads the library the `PMPI_` calls
            // below then find (`dlsym(RTLD_NEXT)`); once in this child process.
            mpit_test_support::mpi::init_mpi();
            // SAFETY: a `static` of mpi-sys's C shim, read after MPI_Init.
            let world = unsafe { mpi_sys::RSMPI_COMM_WORLD };
            let (rank, size) = rank_and_size(world);
            // A failed PMPI_Comm_size leaves 1: every rank would pass alone.
            assert_eq!(size, 5, "rank {rank}: the job's size");
            let local = vec![rank as u8; rank + 1];
            let mut merges = 0;
            let all = reduce(world, local, &mut |mut a, b| {
                merges += 1;
                a.extend_from_slice(b);
                a
            });
            assert_eq!(all.is_some(), rank == 0);
            assert_eq!(merges, children(rank, size).count());
            let got = bcast(world, all);
            let want: Vec<u8> = (0..size).flat_map(|r| vec![r as u8; r + 1]).collect();
            assert_eq!(got, want, "rank {rank}");
            // In turn, up the tree: rank 0 sees every rank's bytes once, in rank order.
            let mut seen = Vec::new();
            in_turn(world, vec![rank as u8; rank + 1], &mut |r, b| {
                seen.push((r, b))
            });
            let want: Vec<(usize, Vec<u8>)> =
                (0..size).map(|r| (r, vec![r as u8; r + 1])).collect();
            assert_eq!(
                seen,
                if rank == 0 { want } else { Vec::new() },
                "rank {rank}"
            );
            println!("TREE_OK {rank}");
            // SAFETY: MPI initialised above, finalised once.
            unsafe { mpi_sys::PMPI_Finalize() };
            return;
        }
        let out = mpit_test_support::process::run_ranks(
            5,
            &[],
            "tree::tests::reduce_and_bcast_on_five_ranks",
            CHILD,
            std::time::Duration::from_secs(120),
        );
        let text = mpit_test_support::process::show(&out);
        assert!(out.status.success(), "{text}");
        for rank in 0..5 {
            assert!(text.contains(&format!("TREE_OK {rank}")), "{text}");
        }
    }
}
