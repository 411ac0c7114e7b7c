//! Assignment beyond broadcast: a loop may offer each request to a few of
//! its members instead of all of them, in turn or to the least loaded,
//! and to the next few when nobody claims it in time.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::error::ValidationError;
use crate::id::UserId;
use crate::request_fields::MAX_TIMEOUT_SECONDS;

/// The most members one offer may reach.
pub const MAX_PER_REQUEST: usize = 100;

api_enum! {
    /// Who a loop's new request is offered to.
    Strategy, "assignment.strategy" {
        /// Every active member (the default).
        Broadcast => "broadcast",
        /// The next `per_request` active members, in a turn the loop keeps.
        RoundRobin => "round_robin",
        /// The `per_request` active members with the fewest open requests
        /// offered to or claimed by them.
        LeastLoaded => "least_loaded",
    }
}

/// How a loop offers its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assignment {
    /// Who is offered a request.
    pub strategy: Strategy,
    /// How many members each offer reaches (not for broadcast).
    pub per_request: usize,
    /// Seconds a request waits for a claim before it is also offered to
    /// the next members; none: it waits for those it was offered to.
    pub reassign_after_seconds: Option<i64>,
}

impl Assignment {
    /// Reads `{"strategy", "per_request", "reassign_after_seconds"}` (null
    /// or absent: broadcast), naming every bad part.
    pub fn parse(raw: Option<&Value>) -> Result<Option<Self>, ValidationError> {
        let field = "assignment";
        let map = match raw {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(ValidationError::field(
                    field,
                    "assignment must be an object with strategy, per_request and reassign_after_seconds, or null",
                ))
            }
        };
        let mut errors = ValidationError::default();
        for key in map.keys() {
            if !["strategy", "per_request", "reassign_after_seconds"].contains(&key.as_str()) {
                errors.extend(ValidationError::field(
                    format!("{field}.{key}"),
                    format!("{field}.{key} is not an assignment field: use strategy, per_request and reassign_after_seconds"),
                ));
            }
        }
        let strategy = match map.get("strategy") {
            Some(Value::String(s)) => errors.collect(Strategy::parse(s)),
            _ => errors.collect(Strategy::parse("")),
        };
        let per_request = match (map.get("per_request"), strategy) {
            (None | Some(Value::Null), Some(Strategy::Broadcast)) => Some(0),
            (None | Some(Value::Null), _) => {
                errors.extend(ValidationError::field(
                    "assignment.per_request",
                    "assignment.per_request is required: how many members each request is offered to",
                ));
                None
            }
            (Some(raw), _) => {
                let n = raw
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| (1..=MAX_PER_REQUEST).contains(n));
                if n.is_none() {
                    errors.extend(ValidationError::field(
                        "assignment.per_request",
                        format!("assignment.per_request must be a whole number from 1 to {MAX_PER_REQUEST}"),
                    ));
                }
                n
            }
        };
        let reassign_after_seconds = match map.get("reassign_after_seconds") {
            None | Some(Value::Null) => None,
            Some(raw) => {
                let s = raw
                    .as_i64()
                    .filter(|s| (1..MAX_TIMEOUT_SECONDS).contains(s));
                if s.is_none() {
                    errors.extend(ValidationError::field(
                        "assignment.reassign_after_seconds",
                        format!(
                            "assignment.reassign_after_seconds must be a whole number of seconds from 1 to {}",
                            MAX_TIMEOUT_SECONDS - 1
                        ),
                    ));
                }
                s
            }
        };
        errors.into_result()?;
        match (strategy, per_request) {
            // Broadcast offers to everyone: nothing else of it matters.
            (Some(Strategy::Broadcast), _) => Ok(None),
            (Some(strategy), Some(per_request)) => Ok(Some(Self {
                strategy,
                per_request,
                reassign_after_seconds,
            })),
            _ => Err(ValidationError::field(field, "assignment is invalid")),
        }
    }

    /// As shown and stored.
    pub fn to_value(self) -> Value {
        json!({
            "strategy": self.strategy.as_str(),
            "per_request": self.per_request,
            "reassign_after_seconds": self.reassign_after_seconds,
        })
    }

    /// How many members an offer of a request that needs `quorum`
    /// answers reaches: a quorum of M needs at least M offered.
    pub fn offer_size(self, quorum: Option<usize>) -> usize {
        self.per_request.max(quorum.unwrap_or(0))
    }

    /// The `count` members offered a request next, out of `candidates`
    /// (the loop's active members who may take it, in a fixed order) less
    /// those already offered it. Round robin starts at `turn` (the loop's
    /// shared counter, advanced by `count` for each offer); least loaded
    /// takes those with the fewest open requests in `loads` (absent: none),
    /// the fixed order breaking ties.
    pub fn choose(
        self,
        candidates: &[UserId],
        already: &[UserId],
        count: usize,
        turn: u64,
        loads: &HashMap<UserId, u64>,
    ) -> Vec<UserId> {
        let free: Vec<UserId> = candidates
            .iter()
            .filter(|c| !already.contains(c))
            .copied()
            .collect();
        if free.is_empty() {
            return Vec::new();
        }
        match self.strategy {
            Strategy::Broadcast => free,
            Strategy::RoundRobin => {
                // The turn walks the whole member list, so a member offered
                // a request already is skipped without shifting the others.
                let n = candidates.len() as u64;
                let start = usize::try_from(turn % n).unwrap_or(0);
                candidates
                    .iter()
                    .cycle()
                    .skip(start)
                    .take(candidates.len())
                    .filter(|c| !already.contains(c))
                    .take(count)
                    .copied()
                    .collect()
            }
            Strategy::LeastLoaded => {
                let mut ranked: Vec<(u64, usize, UserId)> = free
                    .iter()
                    .map(|u| {
                        let order = candidates.iter().position(|c| c == u).unwrap_or(0);
                        (loads.get(u).copied().unwrap_or(0), order, *u)
                    })
                    .collect();
                ranked.sort();
                ranked.into_iter().take(count).map(|(_, _, u)| u).collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ObjectId;

    fn user(n: u8) -> UserId {
        UserId::new(ObjectId::from_parts(1, [n; 8]))
    }

    fn round_robin(k: usize) -> Assignment {
        Assignment {
            strategy: Strategy::RoundRobin,
            per_request: k,
            reassign_after_seconds: Some(60),
        }
    }

    #[test]
    fn an_assignment_is_read_strictly_and_broadcast_is_none() {
        assert_eq!(Assignment::parse(None).unwrap(), None);
        assert_eq!(
            Assignment::parse(Some(&json!({"strategy": "broadcast"}))).unwrap(),
            None
        );
        let a = Assignment::parse(Some(&json!({
            "strategy": "round_robin", "per_request": 2, "reassign_after_seconds": 60
        })))
        .unwrap()
        .unwrap();
        assert_eq!(a, round_robin(2));
        assert_eq!(Assignment::parse(Some(&a.to_value())).unwrap(), Some(a));
        for (bad, field) in [
            (json!(3), "assignment"),
            (
                json!({"strategy": "random", "per_request": 1}),
                "assignment.strategy",
            ),
            (json!({"strategy": "round_robin"}), "assignment.per_request"),
            (
                json!({"strategy": "least_loaded", "per_request": 0}),
                "assignment.per_request",
            ),
            (
                json!({"strategy": "least_loaded", "per_request": 1, "reassign_after_seconds": 0}),
                "assignment.reassign_after_seconds",
            ),
            (
                json!({"strategy": "least_loaded", "per_request": 1, "who": 1}),
                "assignment.who",
            ),
        ] {
            let e = Assignment::parse(Some(&bad)).unwrap_err();
            assert_eq!(e.errors[0].field, field, "{bad}");
        }
    }

    #[test]
    fn round_robin_takes_turns_and_skips_those_already_offered() {
        let members = [user(1), user(2), user(3), user(4)];
        let rr = round_robin(2);
        let none = HashMap::new();
        assert_eq!(rr.choose(&members, &[], 2, 0, &none), [user(1), user(2)]);
        assert_eq!(rr.choose(&members, &[], 2, 2, &none), [user(3), user(4)]);
        assert_eq!(rr.choose(&members, &[], 2, 3, &none), [user(4), user(1)]);
        assert_eq!(
            rr.choose(&members, &[user(3)], 2, 2, &none),
            [user(4), user(1)]
        );
        assert_eq!(
            rr.choose(&members, &members, 2, 0, &none),
            Vec::<UserId>::new(),
            "nobody left"
        );
        assert_eq!(rr.offer_size(Some(3)), 3, "a quorum of 3 needs 3");
        assert_eq!(rr.offer_size(None), 2);
    }

    #[test]
    fn least_loaded_takes_the_fewest_open_requests_first() {
        let members = [user(1), user(2), user(3)];
        let ll = Assignment {
            strategy: Strategy::LeastLoaded,
            per_request: 1,
            reassign_after_seconds: None,
        };
        let loads = HashMap::from([(user(1), 3), (user(2), 1)]);
        assert_eq!(ll.choose(&members, &[], 1, 0, &loads), [user(3)]);
        assert_eq!(
            ll.choose(&members, &[user(3)], 2, 0, &loads),
            [user(2), user(1)]
        );
        let even = HashMap::new();
        assert_eq!(
            ll.choose(&members, &[], 1, 0, &even),
            [user(1)],
            "ties by order"
        );
    }
}
