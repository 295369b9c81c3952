//! npm packages installed once into a folder under target/, for tests that run a Node
//! script against them.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Installs `packages` into `dir` (an ES-module package folder) unless the same list is
/// already there.
pub fn install_once(dir: &Path, packages: &[&str]) {
    let ready = dir.join(".installed");
    let wanted = packages.join(" ");
    if std::fs::read_to_string(&ready).ok().as_deref() == Some(wanted.as_str()) {
        return;
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"private": true, "type": "module"}"#,
    )
    .unwrap();
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent"])
        .args(packages)
        .current_dir(dir)
        .output()
        .expect("npm (scripts/setup installs nodejs and npm)");
    assert!(
        out.status.success(),
        "npm install {wanted}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&ready, wanted).unwrap();
}
