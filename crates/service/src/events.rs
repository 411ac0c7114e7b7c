//! The event stream: an account's events, in commit order, for clients
//! that listen (Server-Sent Events) instead of receiving webhooks.

use reviewloop_domain::{Event, Permission};

use reviewloop_ports::StoreError;

use crate::error::{use_case_error, BadResumePoint, Denied};

use_case_error! {
    /// Why an event stream could not start ([`EventStream::start`]).
    pub enum StreamStartError {
        Denied(Denied),
        Resume(BadResumePoint),
        Store(StoreError),
    }
}
use crate::ports::EventPorts;
use crate::principal::Principal;

/// Reads the caller's events from a position on.
#[derive(Clone)]
pub struct EventStream {
    ports: EventPorts,
}

impl EventStream {
    /// A stream over `ports`.
    pub fn new(ports: EventPorts) -> Self {
        Self { ports }
    }

    /// Where a listener starts: after `last_event_id` when it resumes
    /// (`Last-Event-ID`), else after the newest event, so it gets what
    /// happens from now on.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn start(
        &self,
        caller: &Principal,
        last_event_id: Option<&str>,
    ) -> Result<i64, StreamStartError> {
        caller.require(Permission::RequestsRead)?;
        match last_event_id.map(str::trim).filter(|id| !id.is_empty()) {
            Some(raw) => raw
                .parse::<i64>()
                .ok()
                .filter(|position| *position >= 0)
                .ok_or(BadResumePoint.into()),
            None => Ok(self.ports.feed.last_position().await?),
        }
    }

    /// Numbers up to `batch` newly committed events, which makes them
    /// visible to listeners; returns how many it numbered.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn number_new_events(&self, batch: u32) -> Result<usize, StoreError> {
        let numbered = self.ports.feed.number_new_events(batch).await?;
        if numbered > 0 {
            self.ports.changes.events_numbered();
        }
        Ok(numbered)
    }

    /// What listeners wait on between reads: woken when new events are
    /// numbered here or (PostgreSQL) by another instance.
    pub fn changes(&self) -> std::sync::Arc<crate::ChangeHub> {
        self.ports.changes.clone()
    }

    /// The caller's events after `position`, oldest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn after(
        &self,
        caller: &Principal,
        position: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Event)>, StoreError> {
        self.ports
            .feed
            .events_after(&caller.user_id, position, limit)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Kit;

    #[tokio::test]
    async fn listeners_start_now_or_resume_after_their_last_event() {
        let mut kit = Kit::new();
        kit.feed().expect_last_position().returning(|| Ok(41));
        let caller = kit.principal(1);
        let stream = EventStream::new(kit.ports());
        assert_eq!(stream.start(&caller, None).await.unwrap(), 41);
        assert_eq!(stream.start(&caller, Some(" 7 ")).await.unwrap(), 7);
        for bad in ["x", "-1", "1.5"] {
            assert!(
                matches!(
                    stream.start(&caller, Some(bad)).await,
                    Err(StreamStartError::Resume(BadResumePoint))
                ),
                "{bad}"
            );
        }
    }

    #[tokio::test]
    async fn the_stream_needs_requests_read() {
        let kit = Kit::new();
        let mut caller = kit.principal(1);
        caller.permissions = vec![Permission::LoopsRead];
        let stream = EventStream::new(kit.ports());
        assert!(matches!(
            stream.start(&caller, None).await,
            Err(StreamStartError::Denied(Denied::Permission(
                Permission::RequestsRead
            )))
        ));
    }
}
