//! The kernel's own idea of the time, as evidence for
//! [`super::clock::doubt`]: `/proc/stat`'s `btime` (the boot time in unix
//! seconds, which the kernel keeps in step with its clock) plus
//! `/proc/uptime` (seconds since boot). Both are read with plain `read`s,
//! so a process-local clock fake (`faketime`'s preloaded `clock_gettime`,
//! or this crate's test-only offset) does not move them. Linux only: `None`
//! elsewhere or when `/proc` is not mounted.

/// The kernel's time now (unix seconds), or `None` when `/proc` cannot
/// tell.
#[must_use]
pub fn kernel_now() -> Option<i64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let btime: i64 = stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let uptime = std::fs::read_to_string("/proc/uptime").ok()?;
    let secs: f64 = uptime.split_whitespace().next()?.parse().ok()?;
    // Uptime is at most years: far inside i64 and f64's exact range.
    #[allow(clippy::cast_possible_truncation)]
    let secs = secs as i64;
    Some(btime.saturating_add(secs))
}

/// The wall clock's doubt now: [`super::clock::doubt`] of `wall` against
/// [`kernel_now`].
#[must_use]
pub fn check(wall: i64) -> Option<super::clock::ClockDoubt> {
    super::clock::doubt(wall, kernel_now())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kernel_agrees_with_a_correct_wall_clock() {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let wall = i64::try_from(wall).unwrap();
        if let Some(kernel) = super::kernel_now() {
            assert!((wall - kernel).abs() <= 2, "wall {wall}, kernel {kernel}");
            assert_eq!(super::check(wall), None);
        }
    }
}
