//! What clients written for cua-driver read about a tool besides its schema: the
//! capability tokens of what it really does, its risk class and its behaviour hints.
//! Each tool states its [`Contract`] next to its arguments ([`super::ToolSpec::CONTRACT`]);
//! `tools/list`, `cua manifest` and docs read it from there.
//!
//! A token is a promise a client acts on (hermes-agent sends `delivery_mode: foreground`
//! only to a tool with `input.delivery_mode`, and element tokens only where
//! `accessibility.element_tokens` is listed), so a tool lists only what it does here.

use serde_json::{Value, json};

/// The version of the token vocabulary, as cua-driver 0.21 numbers it.
pub const CAPABILITY_VERSION: &str = "1";
/// The version of the tool-list shape (capabilities, risk) cua-driver 0.21 sends.
pub const CONTRACT_SCHEMA_VERSION: &str = "1";

/// How much a call can expose or change, in cua-driver's classes: r0 reads driver
/// metadata, r1 acts on one app, r2 reads what the user sees or changes the driver, r3
/// reads or changes the most (whole screens, files, processes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Risk {
    R0,
    R1,
    R2,
    R3,
}

impl Risk {
    pub fn class(self) -> &'static str {
        match self {
            Risk::R0 => "r0",
            Risk::R1 => "r1",
            Risk::R2 => "r2",
            Risk::R3 => "r3",
        }
    }
}

/// A tool's capability tokens, risk and hints.
#[derive(Debug, Clone, Copy)]
pub struct Contract {
    pub capabilities: &'static [&'static str],
    pub risk: Risk,
    /// The call may destroy something a user cares about (typed text, a process).
    pub destructive: bool,
    /// Calling twice with the same arguments does no more than calling once.
    pub idempotent: bool,
    /// The call reaches outside the window it names (other apps, the network).
    pub open_world: bool,
}

impl Contract {
    /// A read-only tool of this class with these tokens.
    pub const fn reads(risk: Risk, capabilities: &'static [&'static str]) -> Contract {
        // What a read promises is what an idempotent action does: nothing more when repeated.
        Contract::idempotent(risk, capabilities)
    }

    /// An action that acts again to no further effect: not destructive, idempotent, within
    /// the window or setting it names (bring a window to front, set a style).
    pub const fn idempotent(risk: Risk, capabilities: &'static [&'static str]) -> Contract {
        Contract {
            capabilities,
            risk,
            destructive: false,
            idempotent: true,
            open_world: false,
        }
    }

    /// An input action: not idempotent, reaches the app it acts on.
    pub const fn input(capabilities: &'static [&'static str]) -> Contract {
        Contract {
            capabilities,
            risk: Risk::R1,
            destructive: true,
            idempotent: false,
            open_world: true,
        }
    }

    /// The `risk` object of tools/list. `enforcement` says whether cua's policy checks the
    /// call (`active`) or only describes it (`metadata_only`: tools that never act).
    pub fn risk_json(&self, enforced: bool) -> Value {
        json!({
            "class": self.risk.class(),
            "enforcement": if enforced { "active" } else { "metadata_only" },
            "operation_sensitive": self.risk >= Risk::R2,
            "version": "1",
        })
    }
}
