//! type_text on the input pipeline: the text is inserted at the caret of an editable
//! element through the accessibility API (background), else typed key by key to the
//! element, which takes the focus first, or to whatever has the window's focus. An app
//! that answers the insert and changes nothing gets the text again as keys.

use super::pipeline::{At, Check, Deliver, InputAct, Plan};
use super::*;
use crate::dispatch::Contract;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TypeTextArgs {
    #[serde(flatten, deserialize_with = "crate::dispatch::with_field_names")]
    pub at: Address,
    /// Text to insert (at most 100,000 characters; 10,000 when typed key by key); newlines and tabs are allowed, other control characters are refused.
    pub text: String,
    /// Milliseconds between characters when typing key by key (0-200). Default 30.
    pub delay_ms: Option<u64>,
    /// Send the text as key events to whatever has focus, even with no editable element targeted (terminals, canvases). Default false: that is an error.
    pub as_keys: Option<bool>,
}

pub struct TypeText;

#[async_trait]
impl ToolSpec for TypeText {
    type Args = TypeTextArgs;
    const NAME: &'static str = "type_text";
    const DESCRIPTION: &'static str = "Insert text (any Unicode) at the caret of an editable element (element_index, the one at x/y, or the focused one) through the accessibility API, else as key events. Special keys belong to press_key / hotkey.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract::input(&[
        "input.keyboard.type",
        "accessibility.element_tokens",
        "input.delivery_mode",
    ]);

    fn output_schema() -> Option<Value> {
        Some(crate::tools::output_schema_of::<ActionResult>())
    }

    fn check(a: &TypeTextArgs) -> Result<(), ToolError> {
        pipeline::check(&a.at, a)
    }

    async fn run(&self, ctx: &ToolContext, a: TypeTextArgs) -> Result<ToolOutput, ToolError> {
        pipeline::run(ctx, &a.at, &a).await
    }
}

/// What an insert's follow-up needs: the element typed into and its text before.
pub(super) struct Inserted {
    node: AxNode,
    index: Option<usize>,
    before: Option<String>,
}

impl TypeTextArgs {
    /// `delay_ms`, 30 when not given.
    fn delay_ms(&self) -> u64 {
        self.delay_ms.unwrap_or(30)
    }

    fn as_keys(&self) -> bool {
        self.as_keys.unwrap_or(false)
    }

    /// The element the text goes to: the one addressed, the editable one at the point, or
    /// the window's focused editable one; refused where there is none and keys were not
    /// asked for.
    async fn element(&self, at: &At<'_>) -> Result<(Option<AxNode>, Option<usize>), ToolError> {
        let window = at.window();
        let (element, index) = match &at.target {
            Target::Element { node, index, .. } => (Some(AxNode::clone(node)), Some(*index)),
            Target::Pixel { x, y, .. } => (at.element_at(*x, *y).await.filter(is_editable), None),
            Target::Window { .. } => (focused_editable(at.p(), at.pid, window).await, None),
        };
        if self.as_keys() || without_tree(at).await {
            return Ok((element, index));
        }
        // Typing needs somewhere to go: an editable element, or key events asked for.
        match &element {
            Some(node) if !takes_text(node) => Err(ToolError::failed(format!(
                "{} is not editable; address a text field, or pass as_keys: true to send key events to it anyway",
                describe(node)
            ))),
            None => Err(ToolError::failed(match at.target {
                Target::Pixel { x, y, .. } => format!(
                    "nothing editable at ({x}, {y}) in window {}; address a text field, or pass as_keys: true to send key events there anyway",
                    window.window_id
                ),
                _ => format!(
                    "nothing editable has the keyboard focus in window {}; give the element_index of a text field, or pass as_keys: true to send key events to the window anyway",
                    window.window_id
                ),
            })),
            _ => Ok((element, index)),
        }
    }

    /// The text inserted through the accessibility API; None where the element has no
    /// editable text interface.
    async fn insert(
        &self,
        at: &At<'_>,
        node: &AxNode,
        index: Option<usize>,
        before: &Option<String>,
    ) -> Result<Option<Plan<Option<Inserted>>>, ToolError> {
        let edit = match at.p().insert_text(&node.handle, &self.text).await {
            Ok(edit) => edit,
            Err(PlatformError::Unsupported(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let chars = self.text.chars().count();
        let what = match edit.replaced {
            0 => format!("typed {chars} characters into {}", describe(node)),
            n => format!(
                "typed {chars} characters into {} over a selection of {n}",
                describe(node)
            ),
        };
        let outcome = Outcome::new(what, Route::ElementText)
            .with("element", element_brief(index, node))
            .with("replaced_chars", json!(edit.replaced));
        let handle = node.handle.clone();
        let expect = match before.as_deref().and_then(|b| spliced(b, edit, &self.text)) {
            Some(text) => Expect::TextIs { handle, text },
            None => Expect::TextContains {
                handle,
                text: self.text.clone(),
            },
        };
        let memo = Inserted {
            node: node.clone(),
            index,
            before: before.clone(),
        };
        let check = Check::read_back(expect, at.settle_ms(), "foreground");
        Ok(Some(Plan::new(outcome, Deliver::Done, check, Some(memo))))
    }

    /// Key by key, to whatever has the window's keyboard focus: an addressed element takes
    /// it first (an element without the text interface, such as a Chromium input), so the
    /// keys land there and not on whatever had it.
    async fn keys(
        &self,
        at: &At<'_>,
        element: Option<(&AxNode, Option<usize>)>,
    ) -> Result<Plan<Option<Inserted>>, ToolError> {
        let chars = self.text.chars().count();
        if chars > crate::keys::MAX_KEYED_CHARS {
            return Err(ToolError::invalid(format!(
                "`text`: {chars} characters is too many to type key by key (at most {}); insert it through element_index on an element with editable text",
                crate::keys::MAX_KEYED_CHARS
            )));
        }
        let mut events = Vec::new();
        if let Target::Pixel { x, y, .. } = at.target {
            events.extend(click_events(x, y, 1, 1, &[]));
        }
        if let (Target::Element { .. }, Some((node, _))) = (&at.target, element) {
            events.extend(focus_clicks(at, node).await?);
        }
        events.extend(text_key_events(&self.text, self.delay_ms()));
        let expect = match element {
            Some((node, _)) => typed_into(at, node, &self.text).await,
            None => at.window_change(at.settle_ms()).await,
        };
        let mut outcome = Outcome::new(
            format!("typed {chars} characters as key events"),
            event_path(at.mode),
        );
        if let Some((node, index)) = element {
            outcome = outcome.with("element", element_brief(index, node));
        }
        let send = Deliver::Events {
            events,
            kind: Synthetic::Keys,
        };
        let check = Check::read_back(expect, at.settle_ms(), "foreground");
        Ok(Plan::new(outcome, send, check, None))
    }
}

/// What shows keys typed into `node`: its text holds them, or the window shows them in one
/// more element than now ([`Expect::TextShown`]).
async fn typed_into(at: &At<'_>, node: &AxNode, text: &str) -> Expect {
    let contains = || Expect::TextContains {
        handle: node.handle.clone(),
        text: text.to_string(),
    };
    let Some(shown) = shown_part(text) else {
        return contains();
    };
    match showing(at.p(), at.pid, at.window(), shown).await {
        Some(before) => Expect::TextShown {
            handle: node.handle.clone(),
            text: text.to_string(),
            shown: shown.to_string(),
            pid: at.pid,
            window: Box::new(at.window().clone()),
            before,
        },
        None => contains(),
    }
}

/// Whether the window has no accessibility tree (it was read by OCR): nothing there can
/// say what is editable or has the focus, so keys go to it as a person's would.
async fn without_tree(at: &At<'_>) -> bool {
    tree_for(at.ctx, at.p(), at.pid, at.window())
        .await
        .is_ok_and(|t| crate::snapshot::text::read_by_ocr(&t))
}

/// The focus for keys to an addressed element: asked of the element; where it will not
/// take it, a real click in the foreground; in the background nothing may, so no key is
/// sent rather than sent elsewhere.
async fn focus_clicks(at: &At<'_>, node: &AxNode) -> Result<Vec<InputEvent>, ToolError> {
    if focus_unless_focused(at.p(), node).await {
        return Ok(Vec::new());
    }
    match at
        .target
        .visible_part()
        .filter(|_| at.mode == Delivery::Foreground)
    {
        Some(part) => {
            let (x, y) = part.center();
            Ok(click_events(x, y, 1, 1, &[]))
        }
        None => Err(ToolError::failed(format!(
            "{} would not take the keyboard focus, so no key was sent (the keys would have gone elsewhere); click it first, or use delivery_mode foreground",
            describe(node)
        ))),
    }
}

#[async_trait]
impl InputAct for TypeTextArgs {
    type Memo = Option<Inserted>;

    fn check(&self, _address: &Address) -> Result<(), ToolError> {
        check_text(&self.text, "text")?;
        match self.delay_ms {
            Some(ms) if ms > MAX_TYPE_DELAY_MS => Err(ToolError::invalid(format!(
                "`delay_ms`: at most {MAX_TYPE_DELAY_MS}, got {ms}"
            ))),
            _ => Ok(()),
        }
    }

    async fn plan(&self, at: &At<'_>) -> Result<Plan<Option<Inserted>>, ToolError> {
        let (element, index) = self.element(at).await?;
        // The live reading's text is the field's text before typing.
        let before = match &element {
            Some(node) => live_element(at.p(), node).await?.text,
            None => None,
        };
        if let (Delivery::Background, false, Some(node)) = (at.mode, self.as_keys(), &element) {
            if let Some(plan) = self.insert(at, node, index, &before).await? {
                return Ok(plan);
            }
        }
        self.keys(at, element.as_ref().map(|n| (n, index))).await
    }

    /// After an insert: GTK 4's hidden entry text, a retry by keys where the app ignored
    /// the insert, and the field's value.
    async fn follow_up(
        &self,
        at: &At<'_>,
        mut outcome: Outcome,
        _expect: &Expect,
        memo: Option<Inserted>,
    ) -> Result<Outcome, ToolError> {
        let Some(Inserted {
            node,
            index,
            before,
        }) = memo
        else {
            return Ok(outcome);
        };
        let p = at.p();
        let before_empty = before.as_deref().is_none_or(str::is_empty);
        outcome = blind_text(p, at.pid, &node, before_empty, outcome).await;
        if outcome.effect == Effect::SuspectedNoop {
            let retyped = KeysInto {
                pid: at.pid,
                window: at.window(),
                node: &node,
                index,
                text: &self.text,
                delay_ms: self.delay_ms(),
                settle_ms: at.settle_ms(),
            };
            if let Some(o) = retyped.after_ignored_insert(p, &before).await? {
                outcome = o;
            }
        }
        Ok(with_new_value(p, outcome, &node).await)
    }
}

/// A text typed key by key into one element, after its app ignored the text interface.
struct KeysInto<'a> {
    pid: u32,
    window: &'a WindowInfo,
    node: &'a AxNode,
    index: Option<usize>,
    text: &'a str,
    delay_ms: u64,
    settle_ms: u64,
}

impl KeysInto<'_> {
    /// Some apps take an EditableText insert, answer true and change nothing (Firefox's
    /// web content does). When the element's text is exactly what it was before the
    /// insert, nothing was typed, so typing again cannot double it: the element takes the
    /// focus and the text goes in as key events, still background (synthetic events to
    /// that window only). GTK 4 ignores synthetic keys, so it keeps its escalation.
    async fn after_ignored_insert(
        &self,
        p: &dyn Platform,
        before: &Option<String>,
    ) -> Result<Option<Outcome>, ToolError> {
        let now = p
            .read_element(&self.node.handle)
            .await
            .ok()
            .and_then(|r| r.text);
        let ignores_keys = p
            .app_quirks(self.pid)
            .await
            .ignores_background_keys
            .is_some();
        if before.is_none() || now != *before || ignores_keys {
            return Ok(None);
        }
        if !focus_unless_focused(p, self.node).await {
            return Ok(None);
        }
        p.send_input(
            self.window,
            &text_key_events(self.text, self.delay_ms),
            Delivery::Background,
        )
        .await?;
        let mut outcome = Outcome::new(
            format!(
                "typed {} characters into {} as key events (the app ignored the accessibility insert)",
                self.text.chars().count(),
                describe(self.node)
            ),
            event_path(Delivery::Background),
        )
        .with("element", element_brief(self.index, self.node))
        .with(
            "note",
            json!("the app answered the accessibility text insert without changing the text; the element was focused and the text typed as key events"),
        );
        let expect = Expect::TextContains {
            handle: self.node.handle.clone(),
            text: self.text.to_string(),
        };
        settle(
            p,
            &expect,
            expect.read_back_ms(self.settle_ms),
            &mut outcome,
            "foreground",
        )
        .await;
        Ok(Some(outcome))
    }
}

/// The text an insert leaves, when the text before was read whole (not cut at the
/// snapshot's length limit): `before` with the edit's span replaced by `typed`.
pub(super) fn spliced(before: &str, edit: TextEdit, typed: &str) -> Option<String> {
    let chars: Vec<char> = before.chars().collect();
    if chars.len() >= crate::platform::MAX_TEXT_CHARS || edit.offset + edit.replaced > chars.len() {
        return None;
    }
    let mut out: String = chars[..edit.offset].iter().collect();
    out.push_str(typed);
    out.extend(&chars[edit.offset + edit.replaced..]);
    Some(out)
}
