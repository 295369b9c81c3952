//! How a browser is started behind the page relay, and where the relay listens: the
//! helper's name, its mode argument and its socket. The launcher (the platform) starts
//! browsers through it and finds their endpoint by it; the relay itself (`web::relay`,
//! the `cua-page-relay` helper) takes the same arguments.

use std::path::{Path, PathBuf};

/// The helper's file name (beside `cua`; `CUA_PAGE_RELAY` overrides where it is).
pub const HELPER: &str = "cua-page-relay";
/// Where `CUA_PAGE_RELAY` names the helper.
pub const HELPER_ENV: &str = "CUA_PAGE_RELAY";

/// How the relay holds a browser: its first argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Chromium's CDP pipe.
    CdpPipe,
    /// Firefox's one WebDriver BiDi session.
    BidiSession,
}

impl Mode {
    pub fn arg(self) -> &'static str {
        match self {
            Mode::CdpPipe => "cdp-pipe",
            Mode::BidiSession => "bidi-session",
        }
    }

    pub fn parse(arg: &str) -> Option<Mode> {
        [Mode::CdpPipe, Mode::BidiSession]
            .into_iter()
            .find(|m| m.arg() == arg)
    }
}

/// The folder relays put their sockets in.
pub fn socket_dir() -> PathBuf {
    crate::files::state_root().join("pages")
}

/// The socket of the relay with pid `relay` serving in `dir`.
pub fn socket_path(dir: &Path, relay: u32) -> PathBuf {
    dir.join(format!("{relay}.sock"))
}
