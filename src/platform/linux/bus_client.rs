//! A D-Bus connection that blocking code can call from anywhere: one async zbus connection
//! driven by a one-thread runtime of its own, each call bounded by [`ANSWER_WAIT`]. The
//! desktops reached over the session bus (GNOME Shell through cua's extension, KWin's
//! screenshots) use it: their display servers are called from async tools and from
//! blocking threads alike, where zbus's blocking API would need the caller's runtime.

use std::time::Duration;

/// How long one call may wait for its answer.
pub const ANSWER_WAIT: Duration = Duration::from_secs(5);

pub struct BusClient {
    /// Drives the connection's I/O; shut down in the background on drop (a runtime may
    /// not be dropped inside another's async context).
    runtime: Option<tokio::runtime::Runtime>,
    conn: zbus::Connection,
}

impl Drop for BusClient {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl BusClient {
    /// Connects to the bus at `address`; `name` names the runtime's thread.
    pub fn connect(address: &str, name: &str) -> Result<BusClient, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(name)
            .enable_all()
            .build()
            .map_err(|e| format!("D-Bus runtime: {e}"))?;
        let owned = address.to_string();
        let conn = run(&runtime, async move {
            zbus::connection::Builder::address(owned.as_str())?
                .build()
                .await
        })?;
        Ok(BusClient {
            runtime: Some(runtime),
            conn,
        })
    }

    /// Runs `call` with the connection and waits for its answer, at most [`ANSWER_WAIT`].
    pub fn call<T, F>(&self, call: impl FnOnce(zbus::Connection) -> F) -> Result<T, String>
    where
        T: Send + 'static,
        F: std::future::Future<Output = zbus::Result<T>> + Send + 'static,
    {
        let runtime = self.runtime.as_ref().expect("runtime until drop");
        run(runtime, call(self.conn.clone()))
    }
}

/// Runs `future` on `runtime` and waits for it, at most [`ANSWER_WAIT`], from any thread
/// (async or not: the caller only blocks on a channel).
fn run<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    future: impl std::future::Future<Output = zbus::Result<T>> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = tx.send(future.await);
    });
    match rx.recv_timeout(ANSWER_WAIT) {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(_) => Err(format!("no answer within {} ms", ANSWER_WAIT.as_millis())),
    }
}
