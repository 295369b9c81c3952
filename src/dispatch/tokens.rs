//! Element tokens: the opaque names get_window_state gives its elements
//! (`s{snapshot}:{index}`, cua-driver's form), which an action may pass as
//! `element_token` instead of `window_id` + `element_index`. A token names one element of
//! one snapshot, the newest read of its window; a token of an older read, or of a snapshot
//! this session no longer holds, is refused as stale, never re-resolved against a newer
//! read (where its index may be another element).
//!
//! [`expand`] turns a token into the `pid`, `window_id`, `element_index` and `snapshot_id`
//! it stands for before the tool sees its arguments, so tools, the recorder and replay
//! know only indices.

use serde_json::{Value, json};

use super::ToolContext;
use crate::errors::ToolError;

/// cua-driver's words for a stale token, which its clients match.
pub const STALE: &str = "element_token is stale; call get_window_state again to refresh";

/// The snapshot id of the `n`th snapshot a context takes.
pub fn snapshot_id(n: u64) -> String {
    format!("s{n:08x}")
}

/// The token of element `index` of a snapshot.
pub fn token_for(snapshot_id: &str, index: usize) -> String {
    format!("{snapshot_id}:{index}")
}

use crate::trajectory::cua_driver::parse_token as parse;

/// The arguments with `element_token` replaced by what it names. Arguments without a token
/// come back as they are; a token that is malformed, stale, or contradicts another target
/// argument is refused, naming the field.
pub fn expand(ctx: &ToolContext, mut args: Value) -> Result<Value, ToolError> {
    let Some(map) = args.as_object_mut() else {
        return Ok(args);
    };
    let Some(token) = map.remove("element_token") else {
        return Ok(args);
    };
    let token = token.as_str().ok_or_else(|| {
        ToolError::invalid("`element_token`: must be a string (from get_window_state's elements)")
    })?;
    let (snapshot_id, index) = parse(token).ok_or_else(|| {
        ToolError::invalid(format!(
            "`element_token`: {token:?} is not an element token (they read s<hex>:<index>, from get_window_state's elements)"
        ))
    })?;
    let snapshot = ctx.snapshot_by_id(snapshot_id).ok_or_else(|| {
        ToolError::StaleToken(format!(
            "{STALE} ({token} names a snapshot this session no longer holds)"
        ))
    })?;
    // Only the newest read of a window hands out live tokens (cua-driver's rule): an older
    // one's element may have moved or changed since, so acting on it fails closed.
    let newest = ctx.snapshot(snapshot.pid, snapshot.window_id);
    if newest.is_some_and(|n| n.snapshot_id != snapshot.snapshot_id) {
        return Err(ToolError::StaleToken(format!(
            "{STALE} ({token}: a newer get_window_state of window {} replaced it)",
            snapshot.window_id
        )));
    }
    let named = [
        ("pid", json!(snapshot.pid)),
        ("window_id", json!(snapshot.window_id)),
        ("element_index", json!(index)),
        ("snapshot_id", json!(snapshot_id)),
    ];
    for (field, value) in named {
        super::addressing::agree(map, field, &value, "element_token")?;
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_back_as_their_snapshot_and_index() {
        let id = snapshot_id(26);
        assert_eq!(id, "s0000001a");
        assert_eq!(parse(&token_for(&id, 7)), Some(("s0000001a", 7)));
        for bad in [
            "", "7", "s:1", "x0001:1", "s00zz:1", "s0001:", "s0001:-1", "s0001",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_token_becomes_its_target_and_stale_or_conflicting_ones_are_refused() {
        let ctx = ToolContext::for_session(crate::platform::DesktopEnv::from_process_env(), "t");
        let tree = crate::platform::AxTree {
            nodes: vec![],
            warning: None,
            left_out: Vec::new(),
            absence: None,
        };
        let snap = ctx.store_snapshot(42, 9, tree, vec![]);
        let token = token_for(&snap.snapshot_id, 3);
        let out = expand(&ctx, json!({ "element_token": token, "session": "t" })).unwrap();
        assert_eq!(
            out,
            json!({ "pid": 42, "window_id": 9, "element_index": 3,
                    "snapshot_id": snap.snapshot_id, "session": "t" })
        );
        let same = expand(&ctx, json!({ "element_token": token, "pid": 42 })).unwrap();
        assert_eq!(same["window_id"], 9);
        let err = expand(&ctx, json!({ "element_token": token, "window_id": 8 })).unwrap_err();
        assert!(
            err.to_string().contains("`window_id`: 8 conflicts"),
            "{err}"
        );
        let err = expand(&ctx, json!({ "element_token": "s0000ffff:1" })).unwrap_err();
        assert!(err.to_string().contains(STALE), "{err}");
        let err = expand(&ctx, json!({ "element_token": "7" })).unwrap_err();
        assert!(err.to_string().contains("`element_token`"), "{err}");
        let newer = ctx.store_snapshot(42, 9, crate::platform::AxTree::default(), vec![]);
        let err = expand(&ctx, json!({ "element_token": token })).unwrap_err();
        assert!(matches!(err, ToolError::StaleToken(_)), "{err}");
        assert!(err.to_string().contains("newer get_window_state"), "{err}");
        let live = token_for(&newer.snapshot_id, 3);
        assert_eq!(
            expand(&ctx, json!({ "element_token": live })).unwrap()["pid"],
            42
        );
        let untouched = json!({ "pid": 1 });
        assert_eq!(expand(&ctx, untouched.clone()).unwrap(), untouched);
    }
}
