//! One download through a ref: Chromium is told to save downloads into the approved
//! folder (under a name of its own, the download's id), the ref is clicked as a user
//! would, and the call waits for that download to finish; the browser's download
//! behaviour is put back whatever happens. Progress is read from the tab's own events
//! (Page.download*): the page relay hands browser-level events to no client.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::act::{self, Input};
use super::{DialogWatch, RefEntry, Refusal, Tab, attach, page_failed};
use crate::errors::ToolError;

/// How long a download may take, from the click to its last byte.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// A finished download: Chromium's id for it (the saved file's name) and its size.
pub struct Downloaded {
    pub id: String,
    pub bytes: u64,
}

/// Clicks `entry` in `tab` and saves what it downloads into `folder`.
pub fn download(
    tab: &Tab,
    entry: &RefEntry,
    folder: &Path,
    watch: &DialogWatch,
) -> Result<Downloaded, ToolError> {
    let (mut cdp, session) = attach(tab)?;
    cdp.renew(DOWNLOAD_TIMEOUT + super::BUDGET);
    cdp.call(
        "Browser.setDownloadBehavior",
        json!({ "behavior": "allowAndName", "downloadPath": folder, "eventsEnabled": true }),
    )
    .map_err(page_failed)?;
    let outcome = (|| {
        let at = act::element_point(&mut cdp, &session, entry)?;
        let mut input = Input::begin(&mut cdp, &session, watch)?;
        act::click_at(&mut input, at, "left", 1)?;
        if input.dialog_opened {
            return Err(Refusal::ActionUnavailable.because(format!(
                "ref {} opened a JavaScript dialog instead of a download: answer it with browser_dialog",
                entry.reference
            )));
        }
        let began = cdp
            .event("Page.downloadWillBegin", Some(&session), super::BUDGET)
            .map_err(page_failed)?
            .ok_or_else(|| {
                Refusal::ActionUnavailable.because(format!(
                    "clicking ref {} ({} {:?}) started no download within {} s",
                    entry.reference,
                    entry.role,
                    entry.name,
                    super::BUDGET.as_secs()
                ))
            })?;
        let id = began["guid"].as_str().unwrap_or_default().to_string();
        let deadline = std::time::Instant::now() + DOWNLOAD_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let progress = cdp
                .event("Page.downloadProgress", Some(&session), left)
                .map_err(page_failed)?
                .ok_or_else(|| {
                    ToolError::failed(format!(
                        "the download did not finish within {} s",
                        DOWNLOAD_TIMEOUT.as_secs()
                    ))
                })?;
            if progress["guid"] != id.as_str() {
                continue;
            }
            match progress["state"].as_str() {
                Some("completed") => {
                    return Ok(Downloaded {
                        id,
                        bytes: progress["receivedBytes"].as_u64().unwrap_or(0),
                    });
                }
                Some("canceled") => {
                    return Err(ToolError::failed("the browser canceled the download"));
                }
                _ => {}
            }
        }
    })();
    let _ = cdp.call(
        "Browser.setDownloadBehavior",
        json!({ "behavior": "default", "eventsEnabled": false }),
    );
    cdp.close();
    outcome
}
