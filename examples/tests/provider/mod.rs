//! What the event tests share: the layout of the provider's `provider_test` event and its
//! control API (see examples/event-provider/mpit_provider.h), found at run time in the
//! preloaded provider.
// Each test file uses a part of this module.
#![allow(dead_code)]

use mpit_safe::{CbSafety, RawConstant};

/// `name` from the environment at run time, else `built` (the build script's value).
fn run_or_build(name: &str, built: Option<&str>) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| built.map(str::to_owned))
}

/// The test event provider: `MPIT_EVENT_PROVIDER` at run time (`scripts/with-mpi abi:IMPL`
/// builds one for an ABI library: an ABI build has no C compiler at build time), else the one
/// build.rs built.
///
/// # Panics
/// If there is neither (not `env!`: a failed build of the provider must fail the tests that
/// need it, not the crate).
pub(crate) fn path() -> String {
    run_or_build("MPIT_EVENT_PROVIDER", option_env!("MPIT_EVENT_PROVIDER")).expect(
        "the event provider was not built (see the build warnings of mpit-tools; an ABI \
         build takes MPIT_EVENT_PROVIDER, which scripts/with-mpi abi:IMPL sets)",
    )
}

/// The C compiler the provider was built with (`MPIT_EVENT_PROVIDER_MPICC` likewise), else
/// `mpicc`.
pub(crate) fn mpicc() -> String {
    run_or_build(
        "MPIT_EVENT_PROVIDER_MPICC",
        option_env!("MPIT_EVENT_PROVIDER_MPICC"),
    )
    .unwrap_or_else(|| "mpicc".to_owned())
}

/// `struct mpit_provider_test` of mpit_provider.h.
#[repr(C)]
pub(crate) struct TestEvent {
    pub(crate) seq: u64,
    pub(crate) value: f64,
    pub(crate) id: i32,
    pub(crate) flag: i8,
}

impl TestEvent {
    /// An event with sequence number `seq` and value `seq / 2`.
    pub(crate) fn new(seq: u64) -> TestEvent {
        TestEvent {
            seq,
            value: seq as f64 * 0.5,
            id: 7,
            flag: 1,
        }
    }
}

/// The header's `MPI_T_cb_safety` constant of a level, as the provider's control API takes
/// it (0..3 in MPICH's header, 0x00/0x03/0x0F/0x3F in the MPI-5 ABI's).
pub(crate) fn raw_safety(level: CbSafety) -> u32 {
    level
        .to_raw()
        .expect("the event API's constants are declared") as u32
}

/// `mpit_provider_raise_at(event, source, context, data)`.
pub(crate) type RaiseAt = unsafe extern "C" fn(i32, i32, u32, *const std::ffi::c_void) -> i32;
type SetScope = unsafe extern "C" fn(i32) -> i32;
type Counter = unsafe extern "C" fn() -> i64;
type Live = unsafe extern "C" fn() -> i32;

/// The preloaded provider's control API.
pub(crate) struct Provider {
    pub(crate) raise_at: RaiseAt,
    set_scope: SetScope,
    set_activity: SetScope,
    free_callbacks: Counter,
    live: Live,
    _lib: libloading::Library,
}

impl Provider {
    /// Opens the provider at `path` (already preloaded: dlopen returns the same object).
    pub(crate) fn load(path: &str) -> Provider {
        // SAFETY: the symbols have the signatures of mpit_provider.h.
        unsafe {
            let lib = libloading::Library::new(path).expect("the event provider");
            let raise_at = *lib.get::<RaiseAt>(b"mpit_provider_raise_at\0").unwrap();
            let set_scope = *lib
                .get::<SetScope>(b"mpit_provider_set_drop_scope\0")
                .unwrap();
            let set_activity = *lib
                .get::<SetScope>(b"mpit_provider_set_activity_safety\0")
                .unwrap();
            let free_callbacks = *lib
                .get::<Counter>(b"mpit_provider_free_callbacks\0")
                .unwrap();
            let live = *lib
                .get::<Live>(b"mpit_provider_live_registrations\0")
                .unwrap();
            Provider {
                raise_at,
                set_scope,
                set_activity,
                free_callbacks,
                live,
                _lib: lib,
            }
        }
    }

    /// Dropped-event reports per registration (what mpit-core's event model says); returns the
    /// previous scope.
    pub(crate) fn drops_per_registration(&self) -> i32 {
        // SAFETY: plain C call with an enum value of mpit_provider.h.
        unsafe { (self.set_scope)(1) }
    }

    /// The context in which events of real MPI activity are raised; returns `MPI_SUCCESS` or
    /// the provider's error.
    pub(crate) fn set_activity_safety(&self, context: CbSafety) -> i32 {
        // SAFETY: plain C call; the provider checks the value.
        unsafe { (self.set_activity)(raw_safety(context) as i32) }
    }

    /// Free callbacks the provider has run since its counters were reset.
    pub(crate) fn free_callbacks(&self) -> i64 {
        // SAFETY: plain C call.
        unsafe { (self.free_callbacks)() }
    }

    /// Registrations allocated and not freed (those a running raise still holds included).
    pub(crate) fn live_registrations(&self) -> i32 {
        // SAFETY: plain C call.
        unsafe { (self.live)() }
    }

    /// Raises `provider_test` event `ev` from `source` in a context of level `context`.
    pub(crate) fn raise(
        &self,
        ev: usize,
        source: usize,
        context: CbSafety,
        data: &TestEvent,
    ) -> i32 {
        let context = raw_safety(context);
        // SAFETY: `data` has the event type's layout and lives for the call.
        unsafe {
            (self.raise_at)(
                ev as i32,
                source as i32,
                context,
                (data as *const TestEvent).cast(),
            )
        }
    }
}
