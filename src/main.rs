//! The `stackless-tui` binary: parse flags, hand over to the library.

fn main() -> std::process::ExitCode {
    stackless_tui::console::main()
}
