//! What the integration tests share.

use std::sync::{Mutex, MutexGuard};

use mpit_safe::Mpit;

/// The test harness runs tests on several threads; a token below `MPI_THREAD_MULTIPLE` confines
/// MPI_T to one thread, so the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// A token and the turn, dropped in that order (fields drop in declaration order).
pub(crate) struct Turn {
    pub(crate) mpit: Mpit,
    _turn: MutexGuard<'static, ()>,
}

/// Waits for this test's turn and initialises MPI_T.
pub(crate) fn turn() -> Turn {
    let guard = TURN.lock().unwrap_or_else(|p| p.into_inner());
    Turn {
        mpit: Mpit::init().unwrap(),
        _turn: guard,
    }
}
