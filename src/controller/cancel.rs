//! `stackless operation cancel ID --json` (stackless 0.4.0).
