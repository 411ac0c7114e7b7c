use serde_json::json;

use super::*;
use crate::id::ObjectId;

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

fn record(n: i64) -> AuditRecord {
    AuditRecord {
        account_id: UserId::new(ObjectId::from_parts(1, [1; 8])),
        at: at(n),
        action: "request.completed".into(),
        loop_id: Some(LoopId::new(ObjectId::from_parts(1, [2; 8]))),
        request_id: Some(RequestId::new(ObjectId::from_parts(1, [3; 8]))),
        data: json!({"status": "completed", "response_data": n}),
    }
}

fn chain(n: i64) -> Vec<AuditEntry> {
    let mut entries: Vec<AuditEntry> = Vec::new();
    for i in 0..n {
        let next = AuditEntry::after(entries.last(), record(i));
        entries.push(next);
    }
    entries
}

#[test]
fn a_chain_links_each_entry_to_the_one_before() {
    let entries = chain(3);
    assert_eq!(entries[0].seq, 1);
    assert_eq!(entries[0].prev_hash, GENESIS);
    assert_eq!(entries[1].prev_hash, entries[0].hash);
    assert_eq!(entries[2].seq, 3);
    assert_eq!(entries[2].hash.len(), 64);
    assert_eq!(verify_chain(&entries), Ok(3));
    assert_eq!(verify_chain(&[]), Ok(0));
}

#[test]
fn a_changed_entry_is_named() {
    let mut entries = chain(5);
    entries[2].data = json!({"status": "completed", "response_data": "forged"});
    assert_eq!(verify_chain(&entries), Err(ChainBreak::Changed { seq: 3 }));
}

#[test]
fn a_changed_entry_with_its_hash_made_to_fit_is_named() {
    let mut entries = chain(5);
    entries[2].action = "request.cancelled".into();
    entries[2].hash = entries[2].computed_hash();
    assert_eq!(
        verify_chain(&entries),
        Err(ChainBreak::Replaced { seq: 3, next: 4 })
    );
    assert_eq!(
        ChainBreak::Replaced { seq: 3, next: 4 }.to_string(),
        "entry 3 was changed: entry 4 was written after a different entry 3"
    );
}

#[test]
fn a_removed_entry_is_named_whether_or_not_the_rest_was_renumbered() {
    let mut gap = chain(5);
    gap.remove(1);
    assert_eq!(verify_chain(&gap), Err(ChainBreak::Removed { seq: 2 }));

    let mut renumbered = chain(5);
    renumbered.remove(1);
    for entry in renumbered.iter_mut().skip(1) {
        entry.seq -= 1;
    }
    assert_eq!(
        verify_chain(&renumbered),
        Err(ChainBreak::Removed { seq: 2 })
    );
}

/// `original` with a foreign entry at `seq` (properly hashed and linked)
/// and the entries from there on renumbered.
fn forged_at(original: &[AuditEntry], seq: usize) -> Vec<AuditEntry> {
    let forged = AuditEntry::after(Some(&original[seq - 2]), record(99));
    let mut entries: Vec<AuditEntry> = original[..seq - 1].to_vec();
    entries.push(forged);
    for entry in &original[seq - 1..] {
        let mut moved = entry.clone();
        moved.seq += 1;
        entries.push(moved);
    }
    entries
}

#[test]
fn an_inserted_entry_is_named() {
    let original = chain(5);
    // Put in after entry 2 with a proper hash, the rest renumbered.
    let forged = AuditEntry::after(Some(&original[1]), record(99));
    let mut entries: Vec<AuditEntry> = original[..2].to_vec();
    entries.push(forged.clone());
    for entry in &original[2..] {
        let mut moved = entry.clone();
        moved.seq += 1;
        entries.push(moved);
    }
    assert_eq!(verify_chain(&entries), Err(ChainBreak::Inserted { seq: 3 }));

    // Put in by hand with a made-up hash, the rest renumbered.
    let mut made_up = forged_at(&original, 3);
    made_up[2].hash = "f".repeat(64);
    assert_eq!(verify_chain(&made_up), Err(ChainBreak::Inserted { seq: 3 }));
    // A copy of the entry before it, the rest renumbered.
    let mut copy = original[..2].to_vec();
    let mut dup = original[1].clone();
    dup.seq = 3;
    copy.push(dup);
    for entry in &original[2..] {
        let mut moved = entry.clone();
        moved.seq += 1;
        copy.push(moved);
    }
    assert_eq!(verify_chain(&copy), Err(ChainBreak::Inserted { seq: 3 }));

    // A second entry under a number already used.
    let mut twice = original.clone();
    twice.insert(3, forged);
    assert_eq!(verify_chain(&twice), Err(ChainBreak::Inserted { seq: 3 }));
}

#[test]
fn an_event_is_logged_with_its_typed_facts_not_its_payload() {
    use crate::{Email, Event, EventId, EventType, InviteCode, Loop, Member, NewLoop};
    let loop_id = LoopId::new(ObjectId::from_parts(1, [2; 8]));
    let creator = UserId::new(ObjectId::from_parts(1, [1; 8]));
    let joiner = UserId::new(ObjectId::from_parts(1, [4; 8]));
    let lp = Loop::create(
        loop_id,
        NewLoop::parse(Some("Ops"), None, None).unwrap(),
        Member::creator(loop_id, creator, Email::parse("c@x.io").unwrap(), at(0)),
        InviteCode::from_random([1; 6]),
        at(0),
    );
    let member = Member::joined(loop_id, joiner, Email::parse("j@x.io").unwrap(), at(1));
    // A payload that says something else is not what the log keeps.
    let payload = json!({"member": {"user_id": "elsewhere", "status": "removed"}});
    let event = Event::for_loop(
        EventId::new(ObjectId::from_parts(1, [5; 8])),
        EventType::LoopMemberJoined,
        &lp,
        payload,
        at(1),
    )
    .about_member(&member);
    let record = AuditRecord::of_event(&event);
    assert_eq!(record.action, "loop.member_joined");
    assert_eq!(record.data["member"], json!(joiner));
    assert_eq!(record.data["member_status"], "active");
    assert_eq!(record.data["event_id"], json!(event.id));
    assert!(record.data.get("status").is_none(), "{}", record.data);
}
