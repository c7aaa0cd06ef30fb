//! The integration suite: one binary, one module per area (code-anchors §6.3/21).
// Tests stage fixtures with plain renames; the one-writer rule (clippy.toml) is for the crate.
#![allow(clippy::disallowed_methods)]

mod architecture;
mod arm64;
mod bench;
mod catalog_facts;
mod common;
mod config;
mod container;
mod container_hostile;
mod container_toolkit;
mod dead_ends;
mod detect;
mod docs;
mod doctor;
mod first_hour;
mod first_run;
mod fleet;
mod framework;
mod gpu_plans;
mod hostile;
mod hostile_crash;
mod hostile_fetch;
mod hostile_hooks;
mod hostile_inputs;
mod hostile_locks;
mod hostile_merge;
mod hostile_prefix;
mod hostile_small;
mod hostile_space;
mod hostile_uninstall;
mod install;
mod manifests;
mod manifests_constraints;
mod monitor;
mod outcome;
mod pipeline;
mod plan;
mod repair;
mod routes;
mod self_path;
mod toolkit;
mod uninstall;
mod uv;
mod verify;
mod wizard;
