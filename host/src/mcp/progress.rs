//! Progress notifications for a tool call that carries a `progressToken`:
//! one when the search starts, then one as each connector answers (the
//! query pipeline's hook, `search::Progress`), on the call's own stream.

use rmcp::model::{ProgressNotificationParam, ProgressToken, RequestMetaObject};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::search::{Progress, ProgressSender};

/// Forwards a search's progress to the client, when it asked for it.
pub struct Reporter {
    sender: Option<ProgressSender>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Reporter {
    pub fn start(peer: Peer<RoleServer>, meta: &RequestMetaObject) -> Reporter {
        let Some(token) = meta.get_progress_token() else {
            return Reporter {
                sender: None,
                task: None,
            };
        };
        let (sender, mut receiver) = mpsc::unbounded_channel::<Progress>();
        let task = tokio::spawn(async move {
            notify(&peer, &token, 0.0, None, "asking the connected tools").await;
            while let Some(progress) = receiver.recv().await {
                let message = format!(
                    "{} answered ({} of {})",
                    progress.connector, progress.answered, progress.total
                );
                let total = Some(progress.total as f64);
                notify(&peer, &token, progress.answered as f64, total, &message).await;
            }
        });
        Reporter {
            sender: Some(sender),
            task: Some(task),
        }
    }

    /// What the query pipeline reports to.
    pub fn sender(&self) -> Option<ProgressSender> {
        self.sender.clone()
    }

    /// Waits until every notification went out, so that they come before
    /// the result.
    pub async fn finish(mut self) {
        self.sender = None;
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

async fn notify(
    peer: &Peer<RoleServer>,
    token: &ProgressToken,
    progress: f64,
    total: Option<f64>,
    message: &str,
) {
    let mut param = ProgressNotificationParam::new(token.clone(), progress).with_message(message);
    if let Some(total) = total {
        param = param.with_total(total);
    }
    // A client that left is no reason to fail the call.
    if let Err(error) = peer.notify_progress(param).await {
        tracing::debug!(%error, "mcp: a progress notification could not be sent");
    }
}
