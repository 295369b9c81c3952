//! `browser_download`: one download a ref starts, saved into a folder the call names.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{acting_tab, blocking, watch};
use crate::dispatch::{Contract, Risk};
use crate::errors::ToolError;
use crate::tools::{ToolContext, ToolOutput, ToolSpec};
use crate::web::browser::download::download;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrowserDownloadArgs {
    /// A target id from get_browser_state (this session's).
    pub target_id: String,
    /// A tab id of that target.
    pub tab_id: String,
    /// The ref whose click starts the download (a link or button of the tab's latest snapshot).
    #[serde(rename = "ref")]
    pub reference: String,
    /// An existing folder, as an absolute canonical path (no symlinks, no `..`): the file is saved there under the download's id.
    pub destination_root: String,
}

pub struct BrowserDownload;

#[async_trait]
impl ToolSpec for BrowserDownload {
    type Args = BrowserDownloadArgs;
    const NAME: &'static str = "browser_download";
    const DESCRIPTION: &'static str = "Click a ref of an exactly bound browser tab that starts a download and save that one download into destination_root (an existing folder, absolute and canonical), under the download's id; waits for it to finish (at most 30 s) and returns its id and size, never its URL or the page's file name. The browser's download setting is restored afterwards.";
    const READ_ONLY: bool = false;
    const CONTRACT: Contract = Contract {
        capabilities: &["browser.download"],
        risk: Risk::R3,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    fn check(a: &BrowserDownloadArgs) -> Result<(), ToolError> {
        let path = std::path::Path::new(&a.destination_root);
        if !path.is_absolute() {
            return Err(ToolError::invalid(
                "`destination_root` is not an absolute path",
            ));
        }
        Ok(())
    }

    async fn run(
        &self,
        ctx: &ToolContext,
        a: BrowserDownloadArgs,
    ) -> Result<ToolOutput, ToolError> {
        Self::check(&a)?;
        let folder = std::path::PathBuf::from(&a.destination_root);
        match std::fs::canonicalize(&folder) {
            Ok(real) if real == folder && real.is_dir() => {}
            Ok(real) if real.is_dir() => {
                return Err(ToolError::invalid(format!(
                    "`destination_root` is not canonical: it is {}",
                    real.display()
                )));
            }
            _ => {
                return Err(ToolError::invalid(
                    "`destination_root` is not an existing folder",
                ));
            }
        }
        let tab = acting_tab(ctx, &a.target_id, &a.tab_id).await?;
        let entry = ctx.browser.resolve(&a.tab_id, &a.reference)?;
        let watch = watch(ctx, &tab).await?;
        let clicked = entry.clone();
        let done = blocking(move || download(&tab, &clicked, &folder, &watch)).await?;
        Ok(ToolOutput::new(
            format!(
                "downloaded {} bytes through {} {} {:?} (download {})",
                done.bytes, entry.reference, entry.role, entry.name, done.id
            ),
            json!({
                "status": "completed",
                "effect": "confirmed",
                "route": "trusted_input",
                "delivery": { "mode": "background" },
                "download_id": done.id,
                "bytes": done.bytes,
                "target_id": a.target_id,
                "tab_id": a.tab_id,
            }),
        ))
    }
}
