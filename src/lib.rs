//! `cua`: a computer-use driver for AI agents whose core is record, replay and regression
//! testing of GUI automation.
//!
//! Data flows one way: [`platform`] (X11 + AT-SPI) → [`tools`] (the tool surface, called
//! through [`dispatch`]) → recording → replay → diff → report. [`sandbox`] provides the
//! headless desktop everything is tested against; [`cli`] is a thin shell over the tool
//! registry. docs/architecture.md lists the modules in layers; none imports one above it.

pub mod caret;
pub mod cli;
pub mod config;
pub mod cursor;
pub mod daemon;
pub mod demo;
pub mod desktop;
pub mod diff;
pub mod dispatch;
pub mod docs;
pub mod errors;
pub mod files;
pub mod golden;
pub mod harness;
pub mod images;
pub mod keys;
pub mod live;
pub mod logs;
pub mod loopback;
pub mod mcp;
pub mod names;
pub mod ocr;
pub mod output;
pub mod platform;
pub mod policy;
pub mod recording;
pub mod replay;
pub mod report;
pub mod sandbox;
#[cfg(all(target_os = "linux", feature = "wayland"))]
pub mod session_access;
pub mod snapshot;
pub mod suggest;
pub mod tools;
pub mod trajectory;
pub mod visual;
pub mod web;

/// Runs the command line and returns the process exit code.
pub fn run() -> i32 {
    cli::main()
}
