//! What cua's pages on the loopback share (`cua golden review --web`, `cua record --live`):
//! the one-time token their URLs live under, the `Host` they answer (so a DNS-rebound
//! name gets nothing), and the interrupt that ends their serve loop.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT / SIGTERM once [`stop_on_interrupt`] ran: a serve loop ends cleanly.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn request_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Makes SIGINT and SIGTERM set [`interrupted`] instead of killing the process.
pub fn stop_on_interrupt() -> Result<(), String> {
    for signal in [nix::sys::signal::SIGINT, nix::sys::signal::SIGTERM] {
        let action = nix::sys::signal::SigAction::new(
            nix::sys::signal::SigHandler::Handler(request_stop),
            nix::sys::signal::SaFlags::empty(),
            nix::sys::signal::SigSet::empty(),
        );
        // SAFETY: the handler only stores to an atomic.
        unsafe { nix::sys::signal::sigaction(signal, &action) }
            .map_err(|e| format!("installing the {signal} handler: {e}"))?;
    }
    Ok(())
}

/// Whether an interrupt came since [`stop_on_interrupt`].
pub fn interrupted() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// 128 random bits, hex: the path every page and socket of one run lives under.
pub fn one_time_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("drawing the page's token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
