//! Files and paths other modules share: a file replaced whole or not at all, a folder
//! copied whole, `~/` paths, and cua's own state folder.

use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a temporary file beside it (named with this process's
/// id, so two processes never share one) and a rename: a reader sees the old file or the
/// new one, never half of one. Creates missing parent folders.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Copies the folder `from` with everything under it into `to` (created, with parents).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(&path, to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// cua's own per-user state: the sandbox registry and the daemon sockets. Deliberately
/// independent of `HOME` and `XDG_*`, which a sandbox gives its apps (and a user's shell
/// may change): `CUA_STATE_DIR` when set, else `/run/user/UID/cua` when that runtime
/// folder exists, else `cua-UID` in the temporary folder.
pub fn state_root() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("CUA_STATE_DIR").filter(|d| !d.is_empty()) {
        return std::path::PathBuf::from(dir);
    }
    let uid = nix::unistd::getuid().as_raw();
    let runtime = std::path::PathBuf::from(format!("/run/user/{uid}"));
    if runtime.is_dir() {
        return runtime.join("cua");
    }
    std::env::temp_dir().join(format!("cua-{uid}"))
}

/// `~/rest` under `$HOME`; any other path as it is.
pub fn expand_home(path: &str) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    PathBuf::from(path)
}

/// A helper program of cua's (`cua-video`, `cua-page-relay`): `env` when set, else `name`
/// beside the running executable, else one folder up (test and bench binaries run from
/// `target/*/deps/`, beside the package's binaries). The error says how to install it.
pub fn helper(name: &str, env: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().unwrap_or(std::path::Path::new("."));
    [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "the helper `{name}` is not beside {} (install it with cua: `cargo install --path .` installs them all; or set {env})",
                exe.display()
            )
        })
}
