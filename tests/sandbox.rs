//! The sandbox guard: several desktops at once, and teardown on drop even when the owner
//! panics.

use cua::sandbox::{Sandbox, SandboxOptions, process_start_time};

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

fn owned_pids(sandbox: &Sandbox) -> Vec<u32> {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.dir().join("state.json")).unwrap())
            .unwrap();
    state["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn two_sandboxes_run_side_by_side_and_a_panicking_owner_still_tears_down() {
    let first = Sandbox::start(SandboxOptions {
        width: 640,
        height: 480,
    })
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::thread::spawn(move || {
        let mut second = Sandbox::start(SandboxOptions {
            width: 800,
            height: 600,
        })
        .unwrap();
        let app = second.spawn_app("sleep", &["600"]).ok();
        let mut pids = owned_pids(&second);
        pids.extend(app);
        tx.send((second.display(), pids, second.dir().to_path_buf()))
            .unwrap();
        panic!("owner fails mid-test");
    });
    let (display, pids, dir) = rx.recv().unwrap();
    assert_ne!(
        display,
        first.display(),
        "each sandbox gets its own display"
    );
    assert!(owner.join().is_err(), "the owner thread panicked");
    std::thread::sleep(std::time::Duration::from_millis(300));
    for pid in &pids {
        assert!(
            !alive(*pid),
            "pid {pid} of the panicked sandbox is still running"
        );
    }
    assert!(
        !dir.exists(),
        "state directory {} left behind",
        dir.display()
    );
    // The first one is untouched.
    for pid in owned_pids(&first) {
        assert!(
            alive(pid) && process_start_time(pid).is_some(),
            "first sandbox lost pid {pid}"
        );
    }
}
