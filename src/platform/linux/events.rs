//! The accessibility event feed: when each application last told the bus that something
//! changed (a state, a name, a value, text, children). Recording and replay wait on it to
//! know when an app has shown an action's effect and gone quiet, instead of re-reading the
//! whole tree on a timer.
//!
//! Apps only send events someone registered for, so starting the feed registers `object:`
//! events with the AT-SPI registry (on a desktop where a screen reader runs, they already
//! flow). It is started on first use, since every app then pays for sending them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use zbus::Connection;

use crate::platform::AppActivity;

const REGISTRY: &str = "org.a11y.atspi.Registry";
const REGISTRY_PATH: &str = "/org/a11y/atspi/registry";
/// Every object event: state, property (name, value, description), text, children,
/// selection, bounds.
const OBJECT_EVENTS: &str = "object:";
/// Events queued for the reader before the oldest are dropped (a burst from a big tree).
const QUEUE: usize = 4096;

/// An object event's body: detail, two integers, a value, properties.
type EventBody = (
    String,
    i32,
    i32,
    zbus::zvariant::OwnedValue,
    HashMap<String, zbus::zvariant::OwnedValue>,
);

/// Whether an event says something a person or the tree would show changed. Bounds,
/// objects being created or dropped (role, parent, defunct), caret moves and redraw hints
/// are left out: an app with an animation sends ~150 of those a second
/// (gtk3-widget-factory's spinners and progress bars) and would never look quiet.
fn is_change(member: &str, detail: &str) -> bool {
    match member {
        "BoundsChanged" | "VisibleDataChanged" | "TextCaretMoved" | "TextBoundsChanged" => false,
        "StateChanged" => detail != "defunct",
        "PropertyChange" => matches!(
            detail,
            "accessible-name" | "accessible-value" | "accessible-description"
        ),
        _ => true,
    }
}

/// Per sender (an app's unique bus name): events seen and when the last one came.
#[derive(Default)]
pub struct EventFeed {
    seen: Mutex<HashMap<String, AppActivity>>,
}

impl EventFeed {
    /// Registers for object events and starts reading them on the runtime's pool.
    pub async fn start(conn: &Connection) -> zbus::Result<Arc<EventFeed>> {
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface("org.a11y.atspi.Event.Object")?
            .build();
        // The match rule first, so no event sent in answer to the registration is missed.
        let mut stream = zbus::MessageStream::for_match_rule(rule, conn, Some(QUEUE)).await?;
        conn.call_method(
            Some(REGISTRY),
            REGISTRY_PATH,
            Some(REGISTRY),
            "RegisterEvent",
            &(OBJECT_EVENTS,),
        )
        .await?;
        let feed = Arc::new(EventFeed::default());
        let writer = Arc::downgrade(&feed);
        tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Some(feed) = writer.upgrade() else {
                    break;
                };
                let header = msg.header();
                let (Some(sender), Some(member)) = (header.sender(), header.member()) else {
                    continue;
                };
                let detail = msg.body().deserialize::<EventBody>().ok();
                if !is_change(
                    member.as_str(),
                    detail.as_ref().map_or("", |b| b.0.as_str()),
                ) {
                    continue;
                }
                let sender = sender.to_string();
                let mut seen = feed.seen.lock().unwrap();
                let entry = seen.entry(sender).or_default();
                entry.events += 1;
                entry.last = Some(Instant::now());
            }
        });
        Ok(feed)
    }

    /// What the app at `bus` has sent so far.
    pub fn activity(&self, bus: &str) -> AppActivity {
        self.seen
            .lock()
            .unwrap()
            .get(bus)
            .cloned()
            .unwrap_or_default()
    }
}
