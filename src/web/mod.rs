//! The web rooms, each its own module: `relay` (the `cua-page-relay` helper that holds a
//! launched browser's debugging connection and serves it on a Unix socket), `page` (the
//! page protocols, CDP and WebDriver BiDi, spoken through that socket) and `browser`
//! (driving a page: its snapshot, actions, dialogs and downloads, on `page`). The browser
//! tools built on them are tools (`tools/browser/`, `tools/page.rs`); how a browser is
//! started behind the relay is the platform's (`platform::page_relay`).

pub mod browser;
pub mod page;
pub mod relay;
