//! File writes other modules share: a file replaced whole or not at all.

use std::path::Path;

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
