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
    /// The names of its named ancestors, nearest first (the page itself left out): what
    /// tells apart two look-alikes (`Delete` in the section `Row 1` and in `Row 2`) when a
    /// recorded turn is bound again. Not in the ref's JSON.
    pub ancestors: Vec<String>,
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
        let nodes = tree["nodes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let ancestry = Ancestry::of(nodes);
        let mut refs = Vec::new();
        for node in nodes {
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
                ancestors: ancestry.names_above(node),
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

/// How many named ancestors a ref keeps: enough for a row in a section in a form.
const MAX_ANCESTORS: usize = 4;

/// The accessibility tree's nodes by id, and each one's parent (from `childIds`, which
/// every Chromium sends; `parentId` is newer).
struct Ancestry<'a> {
    by_id: std::collections::HashMap<&'a str, &'a Value>,
    parent: std::collections::HashMap<&'a str, &'a str>,
}

impl<'a> Ancestry<'a> {
    fn of(nodes: &'a [Value]) -> Ancestry<'a> {
        let mut by_id = std::collections::HashMap::new();
        let mut parent = std::collections::HashMap::new();
        for n in nodes {
            let Some(id) = n["nodeId"].as_str() else {
                continue;
            };
            by_id.insert(id, n);
            for child in n["childIds"].as_array().into_iter().flatten() {
                if let Some(c) = child.as_str() {
                    parent.insert(c, id);
                }
            }
        }
        Ancestry { by_id, parent }
    }

    /// The names of `node`'s named, not ignored ancestors below the page, nearest first
    /// (bounded by [`MAX_ANCESTORS`], and by the tree's size against a cycle).
    fn names_above(&self, node: &Value) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = node["nodeId"].as_str();
        for _ in 0..self.by_id.len() {
            let Some(up) = at.and_then(|id| self.parent.get(id).copied()) else {
                break;
            };
            at = Some(up);
            let Some(n) = self.by_id.get(up) else { break };
            let role = n["role"]["value"].as_str().unwrap_or_default();
            if role == "RootWebArea" || role == "WebArea" || names.len() == MAX_ANCESTORS {
                break;
            }
            let name = n["name"]["value"].as_str().unwrap_or_default().trim();
            if n["ignored"] != true && !name.is_empty() {
                names.push(name.to_string());
            }
        }
        names
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
                ancestors: vec![],
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
    fn ancestors_are_the_named_ones_below_the_page_nearest_first() {
        let node = |id: &str, role: &str, name: &str, children: &[&str]| {
            json!({ "nodeId": id, "role": { "value": role }, "name": { "value": name },
                    "childIds": children })
        };
        let nodes = vec![
            node("1", "RootWebArea", "Orders", &["2"]),
            node("2", "region", "Row 2", &["3"]),
            node("3", "generic", "", &["4"]),
            node("4", "button", "Delete", &[]),
        ];
        let ancestry = Ancestry::of(&nodes);
        assert_eq!(ancestry.names_above(&nodes[3]), vec!["Row 2"]);
        assert!(ancestry.names_above(&nodes[0]).is_empty());
    }

    #[test]
    fn a_line_names_ref_role_name_value_and_states() {
        let mut e = snapshot().refs.remove(0);
        e.value = Some("3".into());
        e.states = vec!["focused".into()];
        assert_eq!(e.line(), r#"- p7:0 button "Add" = "3" [focused]"#);
    }
}
