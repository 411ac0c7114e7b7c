//! Keys recently seen, so that most calls are authenticated without a
//! database trip.
//!
//! An entry lives [`KeyCache::TTL`]: a key revoked by another process (the
//! CLI, another instance) stops working within that long. What this
//! process revokes is forgotten at once. Unknown and revoked keys are never
//! kept, so guessing keys cannot fill the cache.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use reviewloop_domain::ApiKeyId;

use crate::principal::Principal;

type Entries = HashMap<String, (Principal, DateTime<Utc>)>;

/// Bounded map from a key's hash to the principal it authenticates.
#[derive(Debug)]
pub struct KeyCache {
    entries: Mutex<Entries>,
    capacity: usize,
}

impl Default for KeyCache {
    fn default() -> Self {
        Self::with_capacity(Self::CAPACITY)
    }
}

impl KeyCache {
    /// How long an entry is believed. Revocation elsewhere takes effect
    /// within this (the documented bound is 2 s).
    pub const TTL: Duration = Duration::seconds(1);
    /// Entries at most; past it, expired ones are dropped, then all.
    pub const CAPACITY: usize = 10_000;

    /// An empty cache of at most `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        // Each change is one map operation, so a panic elsewhere while the
        // lock was held cannot have left a half-written entry.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The principal of this key hash if it was seen less than TTL ago.
    pub(crate) fn get(&self, hash: &str, now: DateTime<Utc>) -> Option<Principal> {
        let entries = self.entries();
        let (principal, seen) = entries.get(hash)?;
        let age = now - *seen;
        (age >= Duration::zero() && age < Self::TTL).then(|| principal.clone())
    }

    /// Remembers a valid key's principal.
    pub(crate) fn put(&self, hash: String, principal: Principal, now: DateTime<Utc>) {
        let mut entries = self.entries();
        if entries.len() >= self.capacity && !entries.contains_key(&hash) {
            entries.retain(|_, (_, seen)| now - *seen < Self::TTL);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(hash, (principal, now));
    }

    /// Forgets a key at once (it was revoked here).
    pub fn forget_key(&self, id: &ApiKeyId) {
        self.entries()
            .retain(|_, (principal, _)| principal.api_key_id != Some(*id));
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
