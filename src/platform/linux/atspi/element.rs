//! Acting on and reading single elements by their handle (the path an `AxNode` carries):
//! actions, focus, text, values, the options of lists and combo boxes, and a fresh read of
//! one element. The tree walk that hands out the handles is in `mod.rs`.

use super::*;

/// Element operations: actions, text, values and selection on a node handle (`bus|path`).
/// None of these moves the pointer or changes focus.
impl Atspi {
    fn node_ref(handle: &str) -> PlatformResult<NodeRef> {
        let (bus, path) = handle
            .split_once('|')
            .ok_or_else(|| PlatformError::Other(format!("bad element handle `{handle}`")))?;
        Ok(NodeRef {
            bus: bus.to_string(),
            path: path.to_string(),
        })
    }

    async fn interfaces(&self, n: &NodeRef) -> PlatformResult<InterfaceSet> {
        if let Some((_, ifaces)) = self.fixed.lock().unwrap().get(n) {
            return Ok(*ifaces);
        }
        self.call(
            &n.bus,
            &n.path,
            "org.a11y.atspi.Accessible",
            "GetInterfaces",
            &(),
        )
        .await
        .map_err(|e| ax_err("element is gone (take a new get_window_state)", e))
    }

    pub async fn do_action(&self, handle: &str, action: &str) -> PlatformResult<()> {
        let n = Self::node_ref(handle)?;
        let names = self.live_action_names(&n).await;
        let index = names
            .iter()
            .position(|a| a.eq_ignore_ascii_case(action))
            .ok_or_else(|| {
                PlatformError::Unsupported(format!(
                    "element has no action `{action}` (it has: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names
                            .iter()
                            .filter(|s| !s.is_empty())
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ))
            })?;
        let ok: bool = self
            .call(
                &n.bus,
                &n.path,
                "org.a11y.atspi.Action",
                "DoAction",
                &(index as i32,),
            )
            .await
            .map_err(|e| ax_err("do action", e))?;
        if !ok {
            return Err(PlatformError::Unsupported(format!(
                "the app refused action `{action}`"
            )));
        }
        Ok(())
    }

    /// Component.GrabFocus: the element takes the keyboard focus in its window.
    pub async fn grab_focus(&self, handle: &str) -> PlatformResult<()> {
        let n = Self::node_ref(handle)?;
        if !self.interfaces(&n).await?.contains(Interface::Component) {
            return Err(PlatformError::Unsupported(
                "element cannot take the focus (no Component interface)".into(),
            ));
        }
        let ok: bool = self
            .call(
                &n.bus,
                &n.path,
                "org.a11y.atspi.Component",
                "GrabFocus",
                &(),
            )
            .await
            .map_err(|e| ax_err("grab focus", e))?;
        if !ok {
            return Err(PlatformError::Unsupported(
                "the app refused to focus the element".into(),
            ));
        }
        Ok(())
    }

    pub async fn insert_text(
        &self,
        handle: &str,
        text: &str,
    ) -> PlatformResult<crate::platform::TextEdit> {
        const TEXT: &str = "org.a11y.atspi.Text";
        const EDIT: &str = "org.a11y.atspi.EditableText";
        let n = Self::node_ref(handle)?;
        let ifaces = self.interfaces(&n).await?;
        if !ifaces.contains(Interface::EditableText) {
            return Err(PlatformError::Unsupported(
                "element has no editable text".into(),
            ));
        }
        let (caret, count, selections) = futures::join!(
            self.property::<i32>(&n.bus, &n.path, TEXT, "CaretOffset"),
            self.property::<i32>(&n.bus, &n.path, TEXT, "CharacterCount"),
            self.call::<_, i32>(&n.bus, &n.path, TEXT, "GetNSelections", &()),
        );
        let count = count.unwrap_or(0).max(0);
        // Typing over a selection replaces it, as a person's typing would.
        let selection = if selections.unwrap_or(0) > 0 {
            self.call::<_, (i32, i32)>(&n.bus, &n.path, TEXT, "GetSelection", &(0i32,))
                .await
                .ok()
                .map(|(a, b)| (a.min(b).clamp(0, count), a.max(b).clamp(0, count)))
                .filter(|(a, b)| a < b)
        } else {
            None
        };
        let (position, replaced) = match selection {
            Some((start, end)) => {
                let ok: bool = self
                    .call(&n.bus, &n.path, EDIT, "DeleteText", &(start, end))
                    .await
                    .map_err(|e| ax_err("replace the selection", e))?;
                if !ok {
                    return Err(PlatformError::Unsupported(
                        "the app refused to replace the selection (read-only?)".into(),
                    ));
                }
                (start, end - start)
            }
            None => (caret.ok().filter(|c| *c >= 0).unwrap_or(count), 0),
        };
        // The length is in bytes for ATK-based toolkits (GTK 3 and 4, Firefox, Chromium),
        // but Qt resizes the string to it as UTF-16 units: given bytes, Qt appends
        // garbage past the end of the text (seen with Qt 5.15 and 6.4).
        let (toolkit, _) = self.toolkit(&n.bus).await;
        let length = if toolkit.eq_ignore_ascii_case("qt") {
            text.encode_utf16().count()
        } else {
            text.len()
        };
        let ok: bool = self
            .call(
                &n.bus,
                &n.path,
                EDIT,
                "InsertText",
                &(position, text, length as i32),
            )
            .await
            .map_err(|e| ax_err("insert text", e))?;
        if !ok {
            return Err(PlatformError::Unsupported(
                "the app refused the text (read-only?)".into(),
            ));
        }
        // Leave the caret after the text so the next insert follows it.
        let after = position + text.chars().count() as i32;
        let _: zbus::Result<bool> = self
            .call(&n.bus, &n.path, TEXT, "SetCaretOffset", &(after,))
            .await;
        Ok(crate::platform::TextEdit {
            offset: position as usize,
            replaced: replaced as usize,
        })
    }

    pub async fn set_text(&self, handle: &str, text: &str) -> PlatformResult<()> {
        let n = Self::node_ref(handle)?;
        if !self.interfaces(&n).await?.contains(Interface::EditableText) {
            return Err(PlatformError::Unsupported(
                "element has no editable text".into(),
            ));
        }
        let ok: bool = self
            .call(
                &n.bus,
                &n.path,
                "org.a11y.atspi.EditableText",
                "SetTextContents",
                &(text,),
            )
            .await
            .map_err(|e| ax_err("set text", e))?;
        if !ok {
            return Err(PlatformError::Unsupported(
                "the app refused the text (read-only?)".into(),
            ));
        }
        Ok(())
    }

    pub async fn value_range(&self, handle: &str) -> PlatformResult<crate::platform::ValueRange> {
        let n = Self::node_ref(handle)?;
        if !self.interfaces(&n).await?.contains(Interface::Value) {
            return Err(PlatformError::Unsupported(
                "element has no numeric value".into(),
            ));
        }
        const V: &str = "org.a11y.atspi.Value";
        let (current, minimum, maximum, step) = futures::join!(
            self.property::<f64>(&n.bus, &n.path, V, "CurrentValue"),
            self.property::<f64>(&n.bus, &n.path, V, "MinimumValue"),
            self.property::<f64>(&n.bus, &n.path, V, "MaximumValue"),
            self.property::<f64>(&n.bus, &n.path, V, "MinimumIncrement"),
        );
        Ok(crate::platform::ValueRange {
            current: current.map_err(|e| ax_err("read value", e))?,
            minimum: minimum.unwrap_or(f64::MIN),
            maximum: maximum.unwrap_or(f64::MAX),
            step: step.unwrap_or(0.0),
        })
    }

    pub async fn set_value(&self, handle: &str, value: f64) -> PlatformResult<()> {
        let n = Self::node_ref(handle)?;
        self.conn
            .call_method(
                Some(n.bus.as_str()),
                n.path.as_str(),
                Some("org.freedesktop.DBus.Properties"),
                "Set",
                &(
                    "org.a11y.atspi.Value",
                    "CurrentValue",
                    zbus::zvariant::Value::from(value),
                ),
            )
            .await
            .map_err(|e| ax_err("set value", e))?;
        Ok(())
    }

    /// The selectable options of a combo box or list: its children, or, when a child is a
    /// menu or list (GTK3 combo boxes), that child's children. Read regardless of `showing`:
    /// a closed popup's items are not shown but still selectable.
    async fn options(&self, handle: &str) -> PlatformResult<Options> {
        let n = Self::node_ref(handle)?;
        let kids = self.read_children(&n).await;
        let popup = kids
            .iter()
            .find(|k| {
                matches!(
                    k.role,
                    Role::Menu | Role::List | Role::ListBox | Role::Window
                )
            })
            .filter(|_| kids.len() == 1)
            .map(|p| p.node.clone());
        let items = match &popup {
            Some(p) => self.read_children(p).await,
            None => kids,
        };
        Ok(Options {
            owner: n,
            popup,
            items,
        })
    }

    async fn read_children(&self, n: &NodeRef) -> Vec<RawNode> {
        let kids: Vec<(String, zbus::zvariant::OwnedObjectPath)> = self
            .call(
                &n.bus,
                &n.path,
                "org.a11y.atspi.Accessible",
                "GetChildren",
                &(),
            )
            .await
            .unwrap_or_default();
        join_all(
            kids.iter()
                .take(MAX_MANAGED_CHILDREN as usize)
                .enumerate()
                .map(|(i, (bus, path))| {
                    self.read_node(bus, path.as_str(), Some(n.path.clone()), i as i32, None)
                }),
        )
        .await
        .into_iter()
        .flatten()
        .collect()
    }

    pub async fn option_names(&self, handle: &str) -> PlatformResult<Vec<String>> {
        Ok(self
            .options(handle)
            .await?
            .items
            .into_iter()
            .map(|o| o.name)
            .collect())
    }

    /// Scrolls the view holding `handle` by `count` of its siblings (list rows): the row
    /// `count` past the last showing one (or before the first, backwards) is scrolled to
    /// the edge through Component.ScrollTo. Returns the row brought in, or None when the
    /// view is already at that end.
    pub async fn reveal_sibling(
        &self,
        handle: &str,
        forward: bool,
        count: usize,
    ) -> PlatformResult<Option<String>> {
        const ACC: &str = "org.a11y.atspi.Accessible";
        // AT-SPI ScrollType: TOP_EDGE = 2, BOTTOM_EDGE = 3.
        const TOP_EDGE: u32 = 2;
        const BOTTOM_EDGE: u32 = 3;
        let n = Self::node_ref(handle)?;
        let (bus, parent): (String, zbus::zvariant::OwnedObjectPath) = self
            .property(&n.bus, &n.path, ACC, "Parent")
            .await
            .map_err(|e| ax_err("read the parent", e))?;
        let parent = NodeRef {
            bus,
            path: parent.as_str().to_string(),
        };
        let rows = self.read_children(&parent).await;
        let showing: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].states.contains(State::Showing))
            .collect();
        let (Some(&first), Some(&last)) = (showing.first(), showing.last()) else {
            return Err(PlatformError::Unsupported(
                "no row of this view is showing".into(),
            ));
        };
        let target = if forward {
            (last + count).min(rows.len() - 1)
        } else {
            first.saturating_sub(count)
        };
        if showing.contains(&target) {
            return Ok(None);
        }
        let row = &rows[target].node;
        if !self.interfaces(row).await?.contains(Interface::Component) {
            return Err(PlatformError::Unsupported(
                "the rows cannot be scrolled to (no Component interface)".into(),
            ));
        }
        let edge = if forward { BOTTOM_EDGE } else { TOP_EDGE };
        let ok: bool = self
            .call(
                &row.bus,
                &row.path,
                "org.a11y.atspi.Component",
                "ScrollTo",
                &(edge,),
            )
            .await
            .map_err(|e| ax_err("scroll to a row", e))?;
        if !ok {
            return Err(PlatformError::Unsupported(
                "the app refused to scroll to the row".into(),
            ));
        }
        Ok(Some(row.handle()))
    }

    /// The options shown as chosen: those in the `selected` state, else what the box's own
    /// Selection interface names (a GTK 3 combo box marks no item, and one with a name of
    /// its own does not show the choice as its name either).
    pub async fn selected_options(&self, handle: &str) -> PlatformResult<Vec<String>> {
        let options = self.options(handle).await?;
        let marked: Vec<String> = options
            .items
            .iter()
            .filter(|o| o.states.contains(State::Selected))
            .map(|o| o.name.clone())
            .collect();
        if !marked.is_empty() {
            return Ok(marked);
        }
        Ok(self.selected_by_interface(&options.owner).await)
    }

    /// The names of the children a Selection interface says are selected (none when the
    /// element has no such interface).
    async fn selected_by_interface(&self, container: &NodeRef) -> Vec<String> {
        const SELECTION: &str = "org.a11y.atspi.Selection";
        let has = self
            .interfaces(container)
            .await
            .is_ok_and(|i| i.contains(Interface::Selection));
        if !has {
            return Vec::new();
        }
        let count: i32 = self
            .property(
                &container.bus,
                &container.path,
                SELECTION,
                "NSelectedChildren",
            )
            .await
            .unwrap_or(0);
        let mut names = Vec::new();
        for i in 0..count.clamp(0, MAX_MANAGED_CHILDREN) {
            let child: Option<(String, zbus::zvariant::OwnedObjectPath)> = self
                .call(
                    &container.bus,
                    &container.path,
                    SELECTION,
                    "GetSelectedChild",
                    &(i,),
                )
                .await
                .ok();
            let Some((bus, path)) = child else { continue };
            if let Ok(name) = self
                .property::<String>(&bus, path.as_str(), "org.a11y.atspi.Accessible", "Name")
                .await
            {
                names.push(name);
            }
        }
        names
    }

    /// Selects an option through the element's Selection interface (GTK 4 drop-downs,
    /// lists), else through the option's own action, else through the Selection of the
    /// popup holding the options (GTK 3 combo boxes). Qt's combo boxes have neither on
    /// the box; selecting in their popup's list does not change the current item.
    pub async fn select_option(&self, handle: &str, index: usize) -> PlatformResult<()> {
        let options = self.options(handle).await?;
        if self.select_child(&options.owner, index).await? {
            return Ok(());
        }
        let item = options.items.get(index).ok_or_else(|| {
            PlatformError::InvalidInput(format!("option {index} is out of range"))
        })?;
        let names = self.action_names(&item.node, item.states).await;
        let action = ["select", "click", "press", "activate", "toggle"]
            .iter()
            .find_map(|want| names.iter().find(|a| a.eq_ignore_ascii_case(want)));
        if let Some(action) = action {
            return self.do_action(&item.node.handle(), action).await;
        }
        if let Some(popup) = &options.popup {
            if self.select_child(popup, index).await? {
                return Ok(());
            }
        }
        Err(PlatformError::Unsupported(
            "element has no selectable options (no Selection interface, and its options have no action)"
                .into(),
        ))
    }

    /// `Selection.SelectChild` when the container has the interface (false when not).
    async fn select_child(&self, container: &NodeRef, index: usize) -> PlatformResult<bool> {
        if !self
            .interfaces(container)
            .await?
            .contains(Interface::Selection)
        {
            return Ok(false);
        }
        let ok: bool = self
            .call(
                &container.bus,
                &container.path,
                "org.a11y.atspi.Selection",
                "SelectChild",
                &(index as i32,),
            )
            .await
            .map_err(|e| ax_err("select option", e))?;
        if !ok {
            return Err(PlatformError::Unsupported(format!(
                "the app refused to select option {index}"
            )));
        }
        Ok(true)
    }

    pub async fn read_element(
        &self,
        handle: &str,
    ) -> PlatformResult<crate::platform::ElementReading> {
        let n = Self::node_ref(handle)?;
        let ifaces = self.interfaces(&n).await?;
        let (name, states) = futures::join!(
            self.property::<String>(&n.bus, &n.path, "org.a11y.atspi.Accessible", "Name"),
            self.call::<_, StateSet>(
                &n.bus,
                &n.path,
                "org.a11y.atspi.Accessible",
                "GetState",
                &()
            ),
        );
        let states =
            states.map_err(|e| ax_err("element is gone (take a new get_window_state)", e))?;
        let text = if ifaces.contains(Interface::Text) {
            self.text(&n).await
        } else {
            None
        };
        let value = if ifaces.contains(Interface::Value) {
            self.property::<f64>(&n.bus, &n.path, "org.a11y.atspi.Value", "CurrentValue")
                .await
                .ok()
        } else {
            None
        };
        Ok(crate::platform::ElementReading {
            name: self.readable_name(&n, &name.unwrap_or_default()).await,
            states: states
                .iter()
                .map(|s| s.to_static_str().to_string())
                .collect(),
            text,
            value,
        })
    }

    pub async fn toolkit_of(&self, pid: u32) -> Option<String> {
        let bus = self.app_bus_for_pid(pid).await.ok()??;
        let (name, version) = self.toolkit(&bus).await;
        (!name.is_empty()).then(|| format!("{name} {version}").trim().to_string())
    }
}
