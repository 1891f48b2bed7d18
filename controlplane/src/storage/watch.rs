//! The receiving end of a watch.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::mpsc;

use super::StoreEvent;

/// A live watch on a collection.
///
/// Events replayed at registration (history for [`super::WatchStart::After`], synthetic ADDED
/// events for [`super::WatchStart::CurrentState`]) are held here and come first; live events
/// follow through a bounded channel. `recv().await` yields `None` once the watch has ended:
/// the store dropped it because its queue was full, the store stopped its watches, or the
/// store itself was dropped. Events queued before the end are still delivered first.
pub struct Watch {
    pub(super) pending: VecDeque<StoreEvent>,
    pub(super) rx: mpsc::Receiver<StoreEvent>,
    pub(super) initial_rv: u64,
}

impl Watch {
    /// Waits for the next event, in resourceVersion order; `None` when the watch has ended.
    pub async fn recv(&mut self) -> Option<StoreEvent> {
        if let Some(event) = self.pending.pop_front() {
            return Some(event);
        }
        self.rx.recv().await
    }

    /// Returns the next event if one is ready without waiting (used by tests and by callers
    /// draining a watch); `None` when nothing is queued right now or the watch has ended.
    pub fn try_recv(&mut self) -> Option<StoreEvent> {
        self.pending.pop_front().or_else(|| self.rx.try_recv().ok())
    }

    /// The resourceVersion the watch started from: the store's RV at registration for
    /// `Now` and `CurrentState` (the synthetic ADDED events describe exactly that state),
    /// and the requested RV for `After`. A client that has consumed every event replayed at
    /// registration is up to date as of this RV (or of the last event's RV, if later).
    pub fn initial_rv(&self) -> u64 {
        self.initial_rv
    }
}

impl futures::Stream for Watch {
    type Item = StoreEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StoreEvent>> {
        let this = self.get_mut();
        if let Some(event) = this.pending.pop_front() {
            return Poll::Ready(Some(event));
        }
        this.rx.poll_recv(cx)
    }
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("initial_rv", &self.initial_rv)
            .field("pending", &self.pending.len())
            .field("queued", &self.rx.len())
            .finish()
    }
}
