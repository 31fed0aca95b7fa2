//! Timing shared by the speed examples: this thread's CPU time (Linux), so that other
//! work on a shared machine, and time the thread spends descheduled, do not count.

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
}

/// This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID = 3 on Linux).
pub fn thread_cpu_seconds() -> f64 {
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a valid pointer to a timespec.
    unsafe { clock_gettime(3, &mut t) };
    t.sec as f64 + t.nsec as f64 * 1e-9
}

/// The least thread CPU time of `runs` calls of `f`, in seconds.
pub fn best_cpu_time(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = thread_cpu_seconds();
            f();
            thread_cpu_seconds() - t
        })
        .fold(f64::INFINITY, f64::min)
}
