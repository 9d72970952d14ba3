//! The `stackless-tui` binary: parse flags, hand over to the library.

/// The Rust heap is mimalloc's (`SQLite`'s own allocations stay glibc's).
/// Measured on a v14 store of a million instances, recording off, `VmHWM`
/// 10 s after start: glibc 315 MB, jemalloc 315 MB, mimalloc with its
/// defaults 330 MB, mimalloc as [`tune_mimalloc`] sets it 280 MB: no
/// 8-byte header a block (a row's shared allocation is one 192-byte block,
/// a name of up to 15 bytes one 16-byte block, 32 under glibc), and the
/// read's freed scratch handed back at once (BENCHMARKS.md, "The console
/// at 1M: mimalloc").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc 3's `mi_option_t` values (its `include/mimalloc.h`, the
/// version `libmimalloc-sys` 0.1.49 builds; Cargo.lock pins it, and
/// `tests/integration/allocator.rs` checks the names they have).
#[cfg(target_os = "linux")]
mod mi_option {
    /// `mi_option_arena_eager_commit`: commit an arena's memory when it is
    /// reserved (`2`, the default: on Linux) or page by page as used (`0`).
    pub const ARENA_EAGER_COMMIT: i32 = 4;
    /// `mi_option_purge_delay`: milliseconds before freed pages go back to
    /// the OS (`10`, the default; `0`: at once).
    pub const PURGE_DELAY: i32 = 15;
}

#[cfg(target_os = "linux")]
unsafe extern "C" {
    /// mimalloc's `void mi_option_set(mi_option_t option, long value)`.
    fn mi_option_set(option: i32, value: std::ffi::c_long);
}

/// Memory taken page by page as used and handed back as soon as it is
/// free: the console reads a whole store into memory, then frees the
/// read's scratch. Set before mimalloc starts (its options are read once,
/// when the first allocation or its own constructor starts it, and its
/// first arena is reserved then): an entry of `.preinit_array`, which the
/// loader runs before every constructor (`.init_array`) and `main`.
/// Measured at a million instances: `VmHWM` 280 MB; 299 MB with the same
/// options set in `main` (the first arena already committed eagerly).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".preinit_array")]
static TUNE_MIMALLOC: extern "C" fn() = tune_mimalloc;

/// [`TUNE_MIMALLOC`]'s function.
#[cfg(target_os = "linux")]
extern "C" fn tune_mimalloc() {
    // SAFETY: `mi_option_set` only stores an option's value in mimalloc's
    // static option table (no allocation, no other call into the C
    // library); an option so set is not read again from the environment.
    // The symbol is `libmimalloc-sys`'s, linked in by `mimalloc`.
    unsafe {
        mi_option_set(mi_option::ARENA_EAGER_COMMIT, 0);
        mi_option_set(mi_option::PURGE_DELAY, 0);
    }
}

fn main() -> std::process::ExitCode {
    one_malloc_arena();
    stackless_tui::dispatch::main()
}

/// One glibc malloc arena for the whole process (since the global
/// allocator is mimalloc, for `SQLite`'s allocations and the C library's
/// own), set before any thread
/// starts (memory at 100,000 instances): by default each thread gets its own, and memory the
/// reaper's pass or the services read freed stayed with their thread's
/// arena, out of reach of the others: the console at 100,000 instances
/// with its reaper on peaked at 70.4 MB, 61.0 MB with one arena.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; it is called
    // here first thing in `main`, before any other thread exists.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}
