//! Which tools `tools/list` shows (`CUA_TOOLS`): all of them (the default), the `core`
//! profile (observe, act and record: what an agent's loop and a recorded test use), or a
//! comma-separated list of names. Every listed tool costs an agent its schema in context
//! before its first action; a profile narrows what is listed, not what may be called (a
//! call to an unlisted tool still runs, under the server's authority as any other).

/// The environment variable that picks the profile.
pub const TOOLS_ENV: &str = "CUA_TOOLS";

/// Observe, act and record: an agent's observe → act loop and a recorded regression test.
pub const CORE: &[&str] = &[
    "check_permissions",
    "list_apps",
    "launch_app",
    "list_windows",
    "get_window_state",
    "screenshot",
    "verify_state",
    "click",
    "double_click",
    "right_click",
    "type_text",
    "press_key",
    "hotkey",
    "set_value",
    "scroll",
    "drag",
    "start_recording",
    "stop_recording",
    "get_recording_state",
    "replay_trajectory",
];

/// The tools to list: None for all; an error naming an unknown tool (and the closest).
pub fn listed(value: Option<&str>, known: &[&str]) -> Result<Option<Vec<String>>, String> {
    let value = value.map(str::trim).unwrap_or("");
    match value {
        "" | "all" => Ok(None),
        "core" => Ok(Some(CORE.iter().map(|t| t.to_string()).collect())),
        names => {
            let mut listed = Vec::new();
            for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !known.contains(&name) {
                    let hint = crate::suggest::did_you_mean(name, known.iter().copied());
                    return Err(format!(
                        "{TOOLS_ENV}: unknown tool `{name}`{hint} (all, core, or tool names separated by commas)"
                    ));
                }
                listed.push(name.to_string());
            }
            Ok(Some(listed))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_names_known_tools_only() {
        let known = ["click", "get_window_state", "zoom"];
        assert_eq!(listed(None, &known).unwrap(), None);
        assert_eq!(listed(Some("all"), &known).unwrap(), None);
        assert_eq!(
            listed(Some("click, zoom"), &known).unwrap(),
            Some(vec!["click".into(), "zoom".into()])
        );
        let e = listed(Some("click,clik2,zoom"), &known).unwrap_err();
        assert!(e.contains("`clik2`") && e.contains(TOOLS_ENV), "{e}");
        assert_eq!(
            listed(Some("core"), &known).unwrap().unwrap().len(),
            CORE.len()
        );
    }

    #[test]
    fn the_core_profile_names_real_tools() {
        let registry = crate::tools::ToolRegistry::new();
        let known: Vec<&str> = registry.tools().map(|t| t.name()).collect();
        for t in CORE {
            assert!(known.contains(t), "{t}");
        }
    }
}
