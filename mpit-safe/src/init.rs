//! Initialisation and finalisation of the tool information interface (MPI-4.1 §16.3.4).

#![forbid(unsafe_code)]

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread::{self, ThreadId};

use mpit_core::{Error, Result, ThreadLevel};
use mpit_sys as sys;

use crate::ffi::{self, TInit};

/// Thread-level markers for [`Mpit`]: the level a token was initialised with decides whether it
/// may move to or be shared with other threads.
pub mod level {
    use mpit_core::ThreadLevel;

    mod sealed {
        pub trait Sealed {}
    }

    /// A thread support level known at compile time.
    pub trait Level: sealed::Sealed + 'static {
        /// The level this marker stands for.
        const LEVEL: ThreadLevel;
    }

    macro_rules! level {
        ($($(#[$doc:meta])* $name:ident = $v:ident),* $(,)?) => {$(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub enum $name {}
            impl sealed::Sealed for $name {}
            impl Level for $name {
                const LEVEL: ThreadLevel = ThreadLevel::$v;
            }
        )*};
    }

    level! {
        /// `MPI_THREAD_SINGLE`: the token stays on its thread (neither `Send` nor `Sync`).
        Single = Single,
        /// `MPI_THREAD_FUNNELED`: MPI_T calls come from the initialising thread only (neither
        /// `Send` nor `Sync`).
        Funneled = Funneled,
        /// `MPI_THREAD_SERIALIZED`: requested from MPI, but the token is neither `Send` nor
        /// `Sync`: two tokens on two threads could otherwise call concurrently.
        Serialized = Serialized,
        /// `MPI_THREAD_MULTIPLE`: any thread at any time (`Send` and `Sync`).
        Multiple = Multiple,
    }
}

use level::{Level, Single};

/// An initialisation of MPI_T: `MPI_T_init_thread` on creation, `MPI_T_finalize` on drop.
///
/// Everything MPI_T offers is reached through a token, and everything it hands out (sessions,
/// handles) borrows it, so nothing can outlive the `MPI_T_finalize` that may invalidate it.
/// Several tokens may live at once: MPI_T counts initialisations and stays initialised until the
/// last one is finalised (MPI-4.1 §16.3.4).
///
/// `L` is the thread level the token needs ([`level::Single`] by default); [`Mpit::init`] fails
/// with [`Error::ThreadLevelUnavailable`] if MPI_T provides less. Only a token that got
/// `MPI_THREAD_MULTIPLE` is `Send` and `Sync`. Below that level MPI_T must not be called from two
/// threads, so tokens are confined: while one lives on a thread, creating one on another thread
/// fails with [`Error::ThreadLevelUnavailable`] (requested `MPI_THREAD_MULTIPLE`) instead of
/// racing inside the MPI library.
///
/// # Ordering with `MPI_Init`/`MPI_Finalize`
/// The standard lets MPI_T be initialised and finalised at any time (MPI-4.1 §16.3.4), but the
/// implementations crash on some orderings of the raw calls. Measured here, one child process
/// per ordering (`examples/conformance/tests/ordering.rs`; TQuery is `MPI_T_cvar_get_num`):
///
/// | raw ordering | MPICH 4.0.2 | Open MPI 4.1.4 | MPICH 5.0.2 | Open MPI 5.0.11 |
/// |---|---|---|---|---|
/// | (a) TInit, TQuery, TFinalize, Init, Finalize | SIGSEGV in `MPI_Init_thread` | ok | ok | SIGSEGV in `MPI_Init_thread` |
/// | (b) Init, TInit, TQuery, TFinalize, Finalize | ok | ok | ok | ok |
/// | (c) TInit, TQuery, Init, TQuery, TFinalize, Finalize | ok | ok | ok | ok |
/// | (d) Init, TInit, TQuery, Finalize, TQuery, TFinalize | ok | SIGSEGV in `MPI_T_finalize` | ok | ok |
/// | (e) TInit, Init, Finalize, TQuery, TFinalize | ok | SIGSEGV in `MPI_T_finalize` | ok | ok |
/// | (f) Init, Finalize, TInit, TQuery, TFinalize | SIGSEGV in `MPI_T_cvar_get_num` | ok | exit code 1 (assertion in `mpir_pmi.c`) | ok |
/// | (g) TInit, TInit, Init, TFinalize, TQuery, TFinalize, Finalize | ok | ok | ok | ok |
/// | (h) Init, TInit, TFinalize, TInit, TQuery, TFinalize, Finalize | SIGSEGV in `MPI_T_cvar_get_num` | ok | ok | ok |
///
/// Most crashes follow MPI_T's count of initialisations returning to zero, so the first token
/// also makes one process-lifetime initialisation that is never finalised (the "anchor").
/// Through `Mpit` the same orderings (tokens for TInit/TFinalize, `cvar_count` for TQuery) are
/// all ok on the four implementations, except (f) on MPICH: the anchor cannot help when the
/// first token comes after `MPI_Finalize`, so there `Mpit::init` returns
/// [`Error::KnownCrash`] instead of crashing (4.0.2) or aborting at exit (5.0.2).
///
/// **The ordering that is safe everywhere:** create the first token before `MPI_Finalize`
/// (before or after `MPI_Init`, e.g. right after rsmpi's `mpi::initialize()`), and drop tokens
/// whenever you like. With rsmpi: `let universe = mpi::initialize(); let mpit = Mpit::init()?;`
/// at the top of `main`, and both drop at its end in reverse order.
///
/// **The cheaper one on Open MPI 4.1:** the first token *before* `MPI_Init`. Open MPI 4.1.4's
/// `MPI_T_init_thread` opens every component to register its variables: 0.21 s per process
/// after `MPI_Init`, while before it `MPI_Init` finds them open and the two take 0.23 s
/// together instead of 0.43 (the other implementations here: no difference). Pvar handles
/// and sessions still come after `MPI_Init` there. `mpit-prof` does this.
///
/// ```
/// use mpit_safe::Mpit;
/// let mpit = Mpit::init()?;
/// println!("{} control variables", mpit.cvar_count()?);
/// mpit.finalize()?; // or drop it
/// # Ok::<(), mpit_safe::Error>(())
/// ```
#[doc(alias = "MPI_T_init_thread")]
#[doc(alias = "MPI_T_finalize")]
pub struct Mpit<L: Level = Single> {
    provided: ThreadLevel,
    /// `MPI_T_finalize` on drop; `Send` and `Sync` only at [`level::Multiple`].
    pub(crate) init: TInit<L>,
    /// Released after the finalisation (fields drop in order); `None` at
    /// `MPI_THREAD_MULTIPLE`.
    _confined: Option<Confinement>,
}

impl<L: Level> std::fmt::Debug for Mpit<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpit")
            .field("provided", &self.provided)
            .finish_non_exhaustive()
    }
}

impl Mpit<Single> {
    /// `MPI_T_init_thread(MPI_THREAD_SINGLE)`.
    pub fn init() -> Result<Mpit<Single>> {
        Mpit::<Single>::init_thread()
    }
}

impl<L: Level> Mpit<L> {
    /// `MPI_T_init_thread` requesting `L`; fails (after finalising again) if MPI_T provides less.
    ///
    /// MPI-4.1 §16.3.4, `MPI_T_init_thread`.
    ///
    /// ```
    /// use mpit_safe::{Mpit, level::Multiple};
    /// match Mpit::<Multiple>::init_thread() {
    ///     Ok(mpit) => std::thread::scope(|s| {
    ///         s.spawn(|| mpit.cvar_count().unwrap());
    ///     }),
    ///     Err(e) => println!("no MPI_THREAD_MULTIPLE here: {e}"),
    /// }
    /// ```
    #[doc(alias = "MPI_T_init_thread")]
    pub fn init_thread() -> Result<Mpit<L>> {
        // Below MPI_THREAD_MULTIPLE the confinement guarantees no other thread is inside MPI_T.
        let confined = (L::LEVEL < ThreadLevel::Multiple)
            .then(Confinement::enter)
            .transpose()?;
        let anchored = anchor::<L>()?;
        let (init, provided) = ffi::t_init_thread::<L>()?;
        // MPI_T's thread level is fixed by its first initialisation (the anchor); Open MPI
        // 4.1/5.0 report MPI_THREAD_SINGLE from every nested MPI_T_init_thread whatever they
        // support, so the level is the higher of the two answers.
        let mpit = Mpit {
            provided: level_from_raw(provided).max(anchored),
            init,
            _confined: confined,
        };
        if !mpit.provided.satisfies(L::LEVEL) {
            let provided = mpit.provided;
            mpit.finalize()?;
            return Err(Error::ThreadLevelUnavailable {
                requested: L::LEVEL,
                provided,
            });
        }
        Ok(mpit)
    }

    /// The thread level `MPI_T_init_thread` provided (at least `L`).
    pub fn provided(&self) -> ThreadLevel {
        self.provided
    }

    /// `MPI_T_finalize`, reporting its return code (dropping the token ignores it).
    ///
    /// MPI-4.1 §16.3.4, `MPI_T_finalize`.
    #[doc(alias = "MPI_T_finalize")]
    pub fn finalize(self) -> Result<()> {
        // Balances this token's MPI_T_init_thread (nothing borrows the token any more), then
        // releases the confinement.
        let Mpit {
            init, _confined, ..
        } = self;
        init.finalize()
    }
}

/// The process-lifetime initialisation of MPI_T, made before the first token's: the level it
/// provided, or its error.
static ANCHOR: OnceLock<Result<c_int>> = OnceLock::new();

/// Initialises MPI_T once for the rest of the process and never finalises it, so the count of
/// initialisations never returns to zero. Balancing every init with a finalize is what the
/// standard asks, but the implementations tested here crash when the count does return to zero
/// and MPI_T or MPI is initialised again (MPICH 4.0.2: the first MPI_T call after a
/// re-initialisation segfaults, and so does `MPI_Init` after a closed MPI_T cycle, as on Open
/// MPI 5.0.11), or when the last `MPI_T_finalize` follows `MPI_Finalize` (Open MPI 4.1,
/// open-mpi/ompi#11485). With the anchor, every ordering works on all four and none complains at
/// exit (`examples/conformance/tests/ordering.rs` records the raw behaviour).
///
/// The anchor requests the first token's level; what it was provided is the process's MPI_T
/// thread level, returned here.
fn anchor<L: Level>() -> Result<ThreadLevel> {
    if ANCHOR.get().is_none()
        && crate::quirks::applies(&crate::quirks::MPICH_MPI_T_AFTER_FINALIZE)
        && ffi::finalized()?
    {
        // Ordering (f) in the table: MPI_T first initialised after MPI_Finalize.
        return Err(Error::KnownCrash(
            &crate::quirks::MPICH_MPI_T_AFTER_FINALIZE,
        ));
    }
    // Runs once per process; never finalised.
    let provided = ANCHOR.get_or_init(|| {
        ffi::t_init_thread::<L>().map(|(init, provided)| {
            init.keep_forever();
            provided
        })
    });
    Ok(level_from_raw(provided.clone()?))
}

/// The thread that owns MPI_T while tokens below `MPI_THREAD_MULTIPLE` live, and how many.
static CONFINED: Mutex<Option<(ThreadId, usize)>> = Mutex::new(None);

/// A claim on [`CONFINED`] for the calling thread; undone on drop.
struct Confinement;

impl Confinement {
    fn lock() -> MutexGuard<'static, Option<(ThreadId, usize)>> {
        // The data is a plain counter: a panic elsewhere cannot leave it half-written.
        CONFINED.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enter() -> Result<Confinement> {
        let me = thread::current().id();
        let mut g = Confinement::lock();
        match &mut *g {
            Some((owner, n)) if *owner == me => *n += 1,
            Some(_) => {
                return Err(Error::ThreadLevelUnavailable {
                    requested: ThreadLevel::Multiple,
                    provided: ThreadLevel::Single,
                });
            }
            None => *g = Some((me, 1)),
        }
        Ok(Confinement)
    }
}

impl Drop for Confinement {
    fn drop(&mut self) {
        let mut g = Confinement::lock();
        if let Some((_, n)) = &mut *g {
            *n -= 1;
            if *n == 0 {
                *g = None;
            }
        }
    }
}

pub(crate) fn raw_level(l: ThreadLevel) -> c_int {
    match l {
        ThreadLevel::Single => sys::MPI_THREAD_SINGLE,
        ThreadLevel::Funneled => sys::MPI_THREAD_FUNNELED,
        ThreadLevel::Serialized => sys::MPI_THREAD_SERIALIZED,
        ThreadLevel::Multiple => sys::MPI_THREAD_MULTIPLE,
    }
}

/// The provided level; anything unexpected counts as the lowest (never over-promise).
pub(crate) fn level_from_raw(v: c_int) -> ThreadLevel {
    match v {
        sys::MPI_THREAD_MULTIPLE => ThreadLevel::Multiple,
        sys::MPI_THREAD_SERIALIZED => ThreadLevel::Serialized,
        sys::MPI_THREAD_FUNNELED => ThreadLevel::Funneled,
        _ => ThreadLevel::Single,
    }
}
