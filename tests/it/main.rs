//! The integration suite: one binary, one module per area (code-anchors §6.3/21).

mod bench;
mod common;
mod config;
mod detect;
mod doctor;
mod fleet;
mod framework;
mod install;
mod plan;
mod repair;
mod toolkit;
mod uninstall;
mod verify;
mod wizard;
