//! The integration suite: one binary, one module per area (code-anchors §6.3/21).

mod arm64;
mod bench;
mod common;
mod config;
mod detect;
mod doctor;
mod fleet;
mod framework;
mod install;
mod manifests;
mod manifests_constraints;
mod plan;
mod repair;
mod uninstall;
mod verify;
mod wizard;
