//! A tab's snapshot: its interactive elements (the browser's accessibility tree, where a
//! node is a control or takes the focus), each named by a ref `p<snapshot>:<index>` and
//! held by its DOM backend node id. Reading it changes nothing on the page.

use serde_json::{Value, json};

use super::{Refusal, page_failed};
use crate::errors::ToolError;
use crate::web::page::CdpConnection;

/// Accessibility roles (Chromium's names) that are controls an agent acts on.
const CONTROL_ROLES: &[&str] = &[
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
    "treeitem",
    "MenuListPopup",
    "MenuListOption",
];

/// Node states worth telling the agent, when true.
const STATES: &[&str] = &[
    "focused", "checked", "pressed", "selected", "expanded", "disabled", "readonly", "required",
];

/// One element of a snapshot.
#[derive(Debug, Clone)]
pub struct RefEntry {
    pub reference: String,
    pub backend_node_id: i64,
    pub role: String,
    pub name: String,
    pub value: Option<String>,
    pub states: Vec<String>,
    /// The DOM node's name, lowercase (`button`, `input`, …).
    pub node: String,
}

impl RefEntry {
    pub fn to_json(&self) -> Value {
        json!({
            "ref": self.reference,
            "node": self.node,
            "role": self.role,
            "label": self.name,
            "value": self.value,
            "states": self.states,
            "frame": "main",
        })
    }

    /// The line the model reads: `- p3:0 button "Add" = "value" [focused]`.
    pub fn line(&self) -> String {
        let mut line = format!("- {} {} {:?}", self.reference, self.role, self.name);
        if let Some(v) = &self.value {
            line.push_str(&format!(" = {v:?}"));
        }
        if !self.states.is_empty() {
            line.push_str(&format!(" [{}]", self.states.join(", ")));
        }
        line
    }
}

/// A tab's elements as of one reading.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub id: u64,
    pub url: String,
    pub refs: Vec<RefEntry>,
}

impl Snapshot {
    /// Reads the attached tab `session`'s controls as snapshot `id`.
    pub fn take(cdp: &mut CdpConnection, session: &str, id: u64) -> Result<Snapshot, ToolError> {
        let tree = cdp
            .call_in(session, "Accessibility.getFullAXTree", json!({}))
            .map_err(page_failed)?;
        let document = cdp
            .call_in(session, "DOM.getDocument", json!({ "depth": -1 }))
            .map_err(page_failed)?;
        let mut names = std::collections::HashMap::new();
        node_names(&document["root"], &mut names);
        let mut refs = Vec::new();
        for node in tree["nodes"].as_array().into_iter().flatten() {
            let Some(backend) = node["backendDOMNodeId"].as_i64() else {
                continue;
            };
            if node["ignored"] == true {
                continue;
            }
            let role = node["role"]["value"].as_str().unwrap_or_default();
            let property = |name: &str| {
                node["properties"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|p| p["name"] == name)
                    .map(|p| p["value"]["value"].clone())
            };
            let focusable = property("focusable") == Some(Value::Bool(true));
            if !CONTROL_ROLES.contains(&role) && !focusable {
                continue;
            }
            // The document itself takes the focus; it is no control.
            if role == "RootWebArea" || role == "WebArea" {
                continue;
            }
            let states = STATES
                .iter()
                .filter(|s| property(s).is_some_and(|v| v == true || v == "true" || v == "mixed"))
                .map(|s| s.to_string())
                .collect();
            let value = node["value"]["value"].as_str().map(str::to_string);
            refs.push(RefEntry {
                reference: format!("p{id}:{}", refs.len()),
                backend_node_id: backend,
                role: role.to_string(),
                name: node["name"]["value"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                value: value.filter(|v| !v.is_empty()),
                states,
                node: names.get(&backend).cloned().unwrap_or_default(),
            });
        }
        let url = document["root"]["documentURL"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(Snapshot { id, url, refs })
    }

    /// The element `reference` names, if it is one of this snapshot's.
    pub fn resolve(&self, reference: &str) -> Result<RefEntry, ToolError> {
        let parsed = reference
            .strip_prefix('p')
            .and_then(|r| r.split_once(':'))
            .and_then(|(s, i)| Some((s.parse::<u64>().ok()?, i.parse::<usize>().ok()?)));
        let Some((snapshot, index)) = parsed else {
            return Err(Refusal::RefStale.because(format!(
                "ref {reference:?} is not a page ref (p<snapshot>:<index>, from get_browser_state)"
            )));
        };
        if snapshot != self.id {
            return Err(Refusal::RefStale.because(format!(
                "ref {reference:?} is of snapshot p{snapshot}, which p{} of this tab replaced: use that one's refs",
                self.id
            )));
        }
        self.refs.get(index).cloned().ok_or_else(|| {
            Refusal::RefStale.because(format!(
                "ref {reference:?}: snapshot p{snapshot} has {} refs",
                self.refs.len()
            ))
        })
    }
}

/// Every node's lowercase name by backend node id.
fn node_names(node: &Value, out: &mut std::collections::HashMap<i64, String>) {
    if let Some(id) = node["backendNodeId"].as_i64() {
        let name = node["nodeName"].as_str().unwrap_or_default().to_lowercase();
        out.insert(id, name);
    }
    for child in node["children"].as_array().into_iter().flatten() {
        node_names(child, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot {
            id: 7,
            url: "about:blank".into(),
            refs: vec![RefEntry {
                reference: "p7:0".into(),
                backend_node_id: 12,
                role: "button".into(),
                name: "Add".into(),
                value: None,
                states: vec![],
                node: "button".into(),
            }],
        }
    }

    #[test]
    fn refs_resolve_only_in_their_own_snapshot() {
        let s = snapshot();
        assert_eq!(s.resolve("p7:0").unwrap().backend_node_id, 12);
        for stale in ["p6:0", "p7:1", "7:0", "p7", "button"] {
            let e = s.resolve(stale).unwrap_err();
            assert_eq!(e.refusal_code(), Some("browser_ref_stale"), "{stale}");
        }
    }

    #[test]
    fn a_line_names_ref_role_name_value_and_states() {
        let mut e = snapshot().refs.remove(0);
        e.value = Some("3".into());
        e.states = vec!["focused".into()];
        assert_eq!(e.line(), r#"- p7:0 button "Add" = "3" [focused]"#);
    }
}
