//! `cua`: a computer-use driver for AI agents whose core is record, replay and regression
//! testing of GUI automation.
//!
//! Data flows one way: [`platform`] (X11 + AT-SPI) → [`tools`] (the tool surface) →
//! recording → replay → diff → report. [`sandbox`] provides the headless desktop everything
//! is tested against; [`cli`] is a thin shell over the tool registry.

pub mod cli;
pub mod config;
pub mod cursor;
pub mod daemon;
pub mod demo;
pub mod diff;
pub mod docs;
pub mod errors;
pub mod files;
pub mod golden;
pub mod harness;
pub mod images;
pub mod keys;
pub mod logs;
pub mod mcp;
pub mod page;
pub mod platform;
pub mod policy;
pub mod recording;
pub mod replay;
pub mod report;
pub mod sandbox;
pub mod suggest;
pub mod tools;
pub mod trajectory;

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    cli::main()
}
