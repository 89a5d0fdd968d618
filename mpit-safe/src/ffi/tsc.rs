//! The fence's clock: the CPU's time stamp counter, which the profiler reads.

/// The CPU's time stamp counter (`rdtsc`): a few cycles, no system call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn tsc() -> u64 {
    // SAFETY: `rdtsc` reads a register; it exists on every x86_64 CPU, touches no memory and
    // cannot fault in user mode unless the kernel sets CR4.TSD, which Linux does only for
    // processes that ask (prctl PR_SET_TSC) and then the profiler is not used with `tsc`.
    unsafe { core::arch::x86_64::_rdtsc() }
}
