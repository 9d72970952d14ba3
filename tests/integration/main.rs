//! The integration tests that need neither a terminal nor a pseudo-terminal,
//! in one test binary (each test binary links the whole crate): the store,
//! the watcher, the reaper (also under faults), the supervisor, the headless
//! modes, hostile stores, the demo.
//!
//! `cargo test --test integration <module>::` runs one file.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;

mod agent_process;
mod arrows;
mod attack_group_and_framing;
mod attack_repros;
mod audit_pause;
mod child_canaries;
mod children;
mod comments_say_rules;
mod demo;
mod demo_v14;
mod dry_run;
mod faults;
mod flight_recorder;
mod generations;
mod headless;
mod history;
mod hostile;
mod keys_doc;
mod logs;
mod logs_all;
mod logs_burst;
mod logs_gone;
mod logs_search;
mod logs_whole;
mod metrics;
mod protocol_schema;
mod read_only_other_user;
mod real_fixtures;
mod reap_golden;
mod reaper;
mod reaper_control;
mod reaper_hand_over;
mod reaper_releases;
mod row_reuse;
mod serve;
mod serve_property;
mod serve_reads;
mod serve_stop;
mod shape;
mod snapshot_golden;
mod store;
mod store_files;
mod store_swaps_and_planted_links;
mod supervisor;
mod table_stages;
mod verbs;
mod wal_restore;
mod watcher;
