//! The sampling plan and loop: every handle read at a sample, the one-word probes in runs of
//! one case ([`Case`]) attributed without a branch on their decoding or kind, and call mode's
//! samples read at once and attributed later ([`sample_deferred`], [`settles_after`]).

#![forbid(unsafe_code)]

use mpit_safe::level::Level;

use super::multi::{read_multi_deferred, sample_multi, settle_multi};
use super::probe::{Decode, Kind, Slot, WordProbe, read_failed};
use super::words::{DELTA, FLOAT, LANES, OTHER, RAW, SAMPLES, SIGNED, UNSIGNED, WORD, sample_run};
use super::{Profiler, State};

/// Reads every handle and attributes the change since the previous sample to `node`.
#[inline(never)]
pub(super) fn sample<L: Level>(st: &mut State<'_, L>, node: u32) {
    sample_body(st, node)
}

/// [`sample`], inlined into the two hot paths of call mode (the entry and the exit of a
/// call not chosen for timing).
///
/// The probes of at most 8 bytes are all read first, each into its word ([`State::reads`]),
/// then attributed case by case ([`attribute_words`], [`Case`], [`State::runs`]), each run a
/// loop with its decoding and its kind fixed: each word decoded by its probe's shift
/// ([`Decode::value`]); counters, timers and aggregates (most variables), levels and states
/// attributed inline (a compare, a subtraction and an addition for a counter), watermarks and
/// a counter's reset out of line. Nothing of ours between two reads: every `MPI_T_pvar_read`
/// of Open MPI takes a mutex, and a locked instruction waits for the stores before it.
#[inline(always)]
pub(super) fn sample_body<L: Level>(st: &mut State<'_, L>, node: u32) {
    if st.npending != 0 {
        st.settle();
    }
    st.same_valid = false;
    #[cfg(debug_assertions)]
    let force = st.reread_test && !st.words.is_empty();
    #[cfg(debug_assertions)]
    if force {
        st.rereads += 1;
    }
    #[cfg(not(debug_assertions))]
    let force = false;
    let State {
        words: one,
        reads,
        probes: multi,
        runs,
        present,
        flat,
        scratch,
        nodes,
        ..
    } = st;
    let Some(n) = nodes.get_mut(node as usize) else {
        return;
    };
    let acc = &mut n.acc[..];
    let (runs, present) = (&*runs, *present);
    // The first block: nothing is pending.
    let reads = reads.get_mut(..one.len()).unwrap_or_default();
    // Every read first, each into its own word, nothing between two reads but the next
    // call's arguments: no store of ours for the lock inside the next read to wait for, no
    // branch on a value. Their success ANDed, checked once.
    let mut ok = reads.len() == one.len();
    for (p, w) in one.iter().zip(reads.iter_mut()) {
        ok &= p.handle.read_ok(w);
    }
    if !ok || force {
        // A read failed (or the words do not match the probes: never seen): again one by
        // one, each checked.
        reread_failed(one, reads, acc);
    } else {
        attribute_words(one, reads, runs, present, *flat, acc);
    }
    if !multi.is_empty() {
        sample_multi(multi, acc, scratch);
    }
}

/// Samples call mode's whole calls keep waiting for their attribution at most: the exit's of
/// one call and the entry's of the next ([`Profiler::try_sampled_call`]).
pub(super) const PENDING: usize = 2;

/// Whether call mode attributes the samples waiting before it after the call of MPI function
/// `name` rather than before it ([`Profiler::try_sampled_call`]): the sends (`MPI_Send`,
/// `MPI_Isend`, `MPI_Ssend_init`, ..., not `MPI_Sendrecv`), whose peer waits for what they
/// start; after them the work overlaps the message's way to it. Every other call attributes
/// before it: a receive, a wait or a collective would wait for its peers anyway.
pub(super) fn settles_after(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("send") && !name.contains("recv")
}

/// [`sample_body`] with the attribution of the one-element probes left for later
/// ([`State::settle`]): their reads go into the next block of [`State::reads`] and the sample
/// waits there, so that the time between two MPI calls holds the reads alone
/// ([`Profiler::try_sampled_call`] settles where the program waits anyway). A failed read
/// (or a debug build's forced re-read) settles the samples before it and takes this one now
/// ([`reread_deferred`]). The probes of several elements are read after the others, into
/// their own buffers where they compare their bytes ([`read_multi_deferred`]), and sampled
/// now where they do not.
#[inline(always)]
pub(super) fn sample_deferred<L: Level>(st: &mut State<'_, L>, node: u32) {
    // Debug builds: the failed read's path, forced (`REREAD_TEST`).
    #[cfg(debug_assertions)]
    if st.reread_test && !st.words.is_empty() {
        st.rereads += 1;
        return reread_deferred(st, node);
    }
    if usize::from(st.npending) >= PENDING {
        return sample_body(st, node);
    }
    let k = usize::from(st.npending);
    let n = st.words.len();
    let Some(block) = st.reads.get_mut(k * n..(k + 1) * n) else {
        // Never: `replan` sized the blocks for these probes.
        return sample_body(st, node);
    };
    let mut ok = true;
    for (p, w) in st.words.iter().zip(block.iter_mut()) {
        ok &= p.handle.read_ok(w);
    }
    if !ok {
        return reread_deferred(st, node);
    }
    st.pending[k] = node;
    st.npending += 1;
    if !st.probes.is_empty()
        && let Some(n) = st.nodes.get_mut(node as usize)
    {
        read_multi_deferred(&mut st.probes, k, &mut n.acc, &mut st.scratch);
    }
}

/// [`sample_deferred`]'s sample in which a read failed: the samples before it settled, then
/// this one as [`sample_body`] takes it after a failed read (every probe read again, each
/// checked, [`reread_failed`]), and its probes of several elements.
#[cold]
#[inline(never)]
fn reread_deferred<L: Level>(st: &mut State<'_, L>, node: u32) {
    st.settle();
    st.same_valid = false;
    let State {
        words,
        reads,
        probes,
        scratch,
        nodes,
        ..
    } = st;
    let Some(n) = nodes.get_mut(node as usize) else {
        return;
    };
    if let Some(block) = reads.get_mut(..words.len()) {
        reread_failed(words, block, &mut n.acc);
    }
    if !probes.is_empty() {
        sample_multi(probes, &mut n.acc, scratch);
    }
}

/// Every case: its kind, then each decoding with its `Case` ([`attribute_words`]).
macro_rules! cases {
    ($m:ident!($($a:tt)*)) => {
        $m! {
            ($($a)*)
            DELTA: [WordDelta: WORD, UnsignedDelta: UNSIGNED, SignedDelta: SIGNED, FloatDelta: FLOAT,
                LanesDelta: LANES],
            SAMPLES: [UnsignedSamples: UNSIGNED, SignedSamples: SIGNED, FloatSamples: FLOAT,
                LanesSamples: LANES],
            RAW: [UnsignedRaw: UNSIGNED, SignedRaw: SIGNED, FloatRaw: FLOAT, LanesRaw: LANES],
            OTHER: [UnsignedOther: UNSIGNED, SignedOther: SIGNED, FloatOther: FLOAT,
                LanesOther: LANES]
        }
    };
}

/// Probe by probe, each to its case's code: `$p` the probe, `$w` its word.
macro_rules! by_case {
    (($p:ident, $w:ident, $acc:ident) $($k:ident: [$($case:ident: $d:ident),*]),*) => {
        match $p.case {
            $($(Case::$case => sample_run::<$d, $k, L>(
                std::slice::from_mut($p), std::slice::from_ref($w), $acc),)*)*
        }
    };
}

/// Attributes the words `reads` of the probes `one` (all read) to `acc`: run by run, or one by
/// one where `flat`.
#[inline(always)]
fn attribute_words<L: Level>(
    one: &mut [WordProbe<'_, L>],
    reads: &[u64],
    runs: &[u32; CASES + 1],
    present: u32,
    flat: bool,
    acc: &mut [f64],
) {
    // Run by run: a case with probes, its run, its bounds checked (they are `replan`'s: a
    // mismatch, never seen, skips the run). A case without: one test, and a group of cases
    // without any, one test for the group.
    macro_rules! by_runs {
        (() $($k:ident: [$($case:ident: $d:ident),*]),*) => {
            $(if present & (0 $(| 1 << Case::$case as u32)*) != 0 {
                $({
                    let c = Case::$case as usize;
                    let r = runs[c] as usize..runs[c + 1] as usize;
                    if present & (1 << c) != 0
                        && let (Some(run), Some(w)) = (one.get_mut(r.clone()), reads.get(r))
                    {
                        sample_run::<$d, $k, L>(run, w, acc);
                    }
                })*
            })*
        };
    }
    if flat {
        for (p, w) in one.iter_mut().zip(reads) {
            cases!(by_case!(p, w, acc));
        }
    } else {
        cases!(by_runs!());
    }
}

/// The environment variable that makes a debug build's sampling loop read every sample's
/// one-element probes again one by one ([`reread_failed`]), as after a failed read: the test
/// of that path (`tests/profile_ranks.rs`).
#[cfg(debug_assertions)]
pub(super) const REREAD_TEST: &str = "MPIT_PROF_TEST_REREAD";

/// A sample in which a read failed: every probe read again, each checked; a failure counted
/// and its probe left out of the sample.
#[cold]
#[inline(never)]
fn reread_failed<L: Level>(one: &mut [WordProbe<'_, L>], reads: &mut [u64], acc: &mut [f64]) {
    for (p, w) in one.iter_mut().zip(reads.iter_mut()) {
        if !p.handle.read_ok(w) {
            read_failed(p);
            continue;
        }
        let w = &*w;
        cases!(by_case!(p, w, acc));
    }
}

/// How the sampling loop treats a one-element probe: its decoding and its kind as one of
/// the loop's fixed cases, in the loop's order ([`sample_body`]). A 64-bit unsigned
/// variable other than a counter is decoded as any unsigned one; watermarks go out of line.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Case {
    WordDelta,
    UnsignedDelta,
    SignedDelta,
    FloatDelta,
    UnsignedSamples,
    SignedSamples,
    FloatSamples,
    UnsignedRaw,
    SignedRaw,
    FloatRaw,
    UnsignedOther,
    SignedOther,
    FloatOther,
    LanesDelta,
    LanesSamples,
    LanesRaw,
    LanesOther,
}

/// Cases of [`Case`].
pub(super) const CASES: usize = Case::LanesOther as usize + 1;

/// The cases whose sample of the same word as the one before changes nothing in a node that
/// already holds it: deltas (0) and states (the same value): [`State::same_skips`].
const SAME_SKIP_CASES: u32 = 1 << Case::WordDelta as u32
    | 1 << Case::UnsignedDelta as u32
    | 1 << Case::SignedDelta as u32
    | 1 << Case::FloatDelta as u32
    | 1 << Case::LanesDelta as u32
    | 1 << Case::UnsignedRaw as u32
    | 1 << Case::SignedRaw as u32
    | 1 << Case::FloatRaw as u32
    | 1 << Case::LanesRaw as u32;

/// Whether `probes` one-element probes in `cases` cases cost fewer instructions a sample one
/// by one ([`State::flat`]: ~8 a probe for the jump) than run by run (~16 for the cases'
/// tests and ~17 to set up each run present, ~3 a probe); measured with callgrind on
/// Intel MPI's 2 probes in 2 cases (~65 a sample run by run).
fn flat_is_cheaper(probes: usize, cases: usize) -> bool {
    5 * probes < 16 + 17 * cases
}

/// Of probes in the order of their cases (`cases`, sorted): where the run of each case starts
/// (and the last one ends), and the cases present, a bit each ([`State::runs`],
/// [`State::present`]).
fn case_runs(cases: &[Case]) -> ([u32; CASES + 1], u32) {
    let mut runs = [0; CASES + 1];
    for (c, start) in runs.iter_mut().enumerate() {
        // Where the first probe of case `c` or a later one is.
        *start = cases.partition_point(|&k| (k as usize) < c) as u32;
    }
    let present = cases.iter().fold(0, |m, &k| m | 1 << k as u32);
    (runs, present)
}

impl Case {
    pub(super) fn of(decode: Decode, kind: Kind) -> Case {
        use Decode::{Float, Signed, Unsigned, Word};
        match (decode, kind) {
            (Word, Kind::Delta) => Case::WordDelta,
            (Unsigned, Kind::Delta) => Case::UnsignedDelta,
            (Signed, Kind::Delta) => Case::SignedDelta,
            (Float, Kind::Delta) => Case::FloatDelta,
            (Unsigned | Word, Kind::Samples) => Case::UnsignedSamples,
            (Signed, Kind::Samples) => Case::SignedSamples,
            (Float, Kind::Samples) => Case::FloatSamples,
            (Unsigned | Word, Kind::Raw) => Case::UnsignedRaw,
            (Signed, Kind::Raw) => Case::SignedRaw,
            (Float, Kind::Raw) => Case::FloatRaw,
            (Unsigned | Word, Kind::Up | Kind::Down) => Case::UnsignedOther,
            (Signed, Kind::Up | Kind::Down) => Case::SignedOther,
            (Float, Kind::Up | Kind::Down) => Case::FloatOther,
        }
    }

    /// The case of a variable of several integer elements in at most 8 bytes (a per-peer
    /// array on a communicator of two ranks): read as one word, like a one-element one, and
    /// summed where the word changed.
    pub(super) fn lanes(kind: Kind) -> Case {
        match kind {
            Kind::Delta => Case::LanesDelta,
            Kind::Samples => Case::LanesSamples,
            Kind::Raw => Case::LanesRaw,
            Kind::Up | Kind::Down => Case::LanesOther,
        }
    }
}

impl<'s, L: Level> Profiler<'s, L> {
    /// Reads every handle and attributes the change since the previous sample to `node`.
    #[inline(always)]
    pub(super) fn sample_into(&self, st: &mut State<'s, L>, node: u32) {
        if st.handles() > 0 {
            sample(st, node)
        }
    }
}

impl<'s, L: Level> State<'s, L> {
    /// Orders the one-element probes (and their slots) in runs of one [`Case`] (the sampling
    /// loop's [`State::runs`]); after handles came or went.
    pub(super) fn replan(&mut self) {
        self.settle();
        let words = std::mem::take(&mut self.words);
        let slots = std::mem::take(&mut self.word_slots);
        let mut pairs: Vec<(WordProbe<'s, L>, Slot)> = words.into_iter().zip(slots).collect();
        // Stable: within a run, the order of allocation.
        pairs.sort_by_key(|(p, _)| p.case);
        let cases: Vec<Case> = pairs.iter().map(|(p, _)| p.case).collect();
        (self.runs, self.present) = case_runs(&cases);
        self.flat = flat_is_cheaper(cases.len(), self.present.count_ones() as usize);
        (self.words, self.word_slots) = pairs.into_iter().unzip();
        self.reads = vec![0; PENDING * self.words.len()];
        self.same_words = vec![0; self.words.len()];
        self.same_valid = false;
        self.same_skips = !self.words.is_empty() && self.present & !SAME_SKIP_CASES == 0;
    }

    /// [`State::settle`] for [`Profiler::try_sampled_call`]: where every waiting sample is
    /// the words last attributed, each in a node that holds them (and no probe of several
    /// elements waits), nothing to do but forget them, without a call.
    #[inline(always)]
    pub(super) fn settle_whole_call(&mut self) {
        let n = self.words.len();
        let mut same = self.same_skips && self.same_valid && self.probes.is_empty();
        let mut k = 0;
        while same && k < usize::from(self.npending) {
            same = match (self.pending.get(k), self.reads.get(k * n..(k + 1) * n)) {
                (Some(&node), Some(w)) => {
                    w == &self.same_words[..]
                        && self
                            .nodes
                            .get(node as usize)
                            .is_some_and(|nd| nd.same_gen == self.same_gen)
                }
                _ => false,
            };
            k += 1;
        }
        if same {
            self.npending = 0;
        } else {
            self.settle();
        }
    }

    /// Attributes the samples waiting in [`State::reads`] ([`sample_deferred`]), oldest
    /// first: each probe's samples in the order they were read, before anything else reads
    /// or reorders the probes.
    ///
    /// Out of line, also in [`Profiler::try_sampled_call`]: a copy inlined at each of its two
    /// places was slower (floor_trio on Open MPI 5.0.11, 4 runs: +8-10 ns a pair of calls
    /// without messages, +10-20 a 1 KiB round trip; paired on mpich-ev, no difference).
    #[inline(never)]
    pub(super) fn settle(&mut self) {
        let n = self.words.len();
        let State {
            words,
            reads,
            runs,
            present,
            flat,
            nodes,
            probes,
            pending,
            npending,
            same_words,
            same_gen,
            same_valid,
            same_skips,
            ..
        } = self;
        for (k, &node) in pending.iter().enumerate().take(usize::from(*npending)) {
            let Some(nd) = nodes.get_mut(node as usize) else {
                continue;
            };
            // The blocks are `replan`'s for these probes: a mismatch, never seen, skips one.
            if let Some(w) = reads.get(k * n..(k + 1) * n) {
                // `memcmp`: fewer instructions than a loop of ours (callgrind, 5 words).
                let same = *same_skips && *same_valid && w == &same_words[..];
                if !same || nd.same_gen != *same_gen {
                    attribute_words(words, w, runs, *present, *flat, &mut nd.acc);
                    if *same_skips {
                        if !same && same_words.len() == w.len() {
                            same_words.copy_from_slice(w);
                            (*same_valid, *same_gen) = (true, *same_gen + 1);
                        }
                        nd.same_gen = *same_gen;
                    }
                }
            }
            if !probes.is_empty() {
                settle_multi(probes, k, &mut nd.acc);
            }
        }
        *npending = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::probe::{Decode, Kind};

    /// The sampling loop attributes `runs[c]..runs[c + 1]` as case `c` and skips the cases
    /// not in `present`: every probe must fall in the run of its own case, and a case must be
    /// present exactly when it has probes. Every (decoding, kind) has its case, and so has
    /// every kind of several elements in one word.
    #[test]
    fn case_runs_cover_each_case() {
        use proptest::prelude::*;
        let decodes = [
            Decode::Unsigned,
            Decode::Signed,
            Decode::Float,
            Decode::Word,
        ];
        let kinds = [Kind::Delta, Kind::Up, Kind::Down, Kind::Samples, Kind::Raw];
        let all: Vec<Case> = decodes
            .iter()
            .flat_map(|&d| kinds.iter().map(move |&k| Case::of(d, k)))
            .chain(kinds.iter().map(|&k| Case::lanes(k)))
            .collect();
        let n = all.len();
        proptest!(|(picks in proptest::collection::vec(0..n, 0..40))| {
            let mut cases: Vec<Case> = picks.iter().map(|&i| all[i]).collect();
            cases.sort();
            let (runs, present) = case_runs(&cases);
            prop_assert_eq!(runs[CASES] as usize, cases.len());
            for c in 0..CASES {
                let run = &cases[runs[c] as usize..runs[c + 1] as usize];
                prop_assert!(run.iter().all(|&k| k as usize == c));
                let has = cases.iter().any(|&k| k as usize == c);
                prop_assert_eq!(present & (1 << c) != 0, has);
                prop_assert_eq!(run.len(), cases.iter().filter(|&&k| k as usize == c).count());
            }
        });
    }
}
