use reviewloop_domain::{verify_chain, ChainBreak, EventType};
use reviewloop_ports::RequestStore;
use serde_json::json;

use super::super::testdb::{fixtures, on_every_backend, TestDb};
use super::*;

async fn every_change_is_chained_in_its_accounts_log(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    let account = lp.creator_id;
    let (mut request, _) = fixtures::stored_request(&store, &lp, 20, "high", 90).await;
    // A change without an event is logged as well.
    let reviewer = UserId::new(fixtures::oid(2));
    request.claim(reviewer, fixtures::at(1)).unwrap();
    request.release(reviewer, fixtures::at(2)).unwrap();
    store.update_request(&request, &[]).await.unwrap();
    request.written();
    request
        .respond(reviewer, json!(7), None, fixtures::at(3))
        .unwrap();
    // The reviewer is one of the event's typed facts, as the service sets it.
    let mut completed =
        fixtures::event_for(&request, &lp, 91, EventType::RequestCompleted).by_reviewer(reviewer);
    completed.data = json!({
        "request": {"id": request.id, "status": "completed", "response_data": 7},
        "reviewer": {"user_id": reviewer, "email": "u2@example.com"},
    });
    store.update_request(&request, &[completed]).await.unwrap();

    assert!(
        store
            .audit_entries(&account, 0, 100)
            .await
            .unwrap()
            .is_empty(),
        "nothing is shown before it is linked"
    );
    assert!(store.link_audit(1000).await.unwrap() >= 4);
    assert_eq!(store.link_audit(1000).await.unwrap(), 0, "linked once");
    let entries = store.audit_entries(&account, 0, 100).await.unwrap();
    let actions: Vec<&str> = entries.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        actions.last().copied(),
        Some("request.completed"),
        "{actions:?}"
    );
    assert!(actions.contains(&"loop.created"), "{actions:?}");
    assert!(actions.contains(&"request.created"), "{actions:?}");
    assert!(actions.contains(&"request.changed"), "{actions:?}");
    assert_eq!(verify_chain(&entries), Ok(entries.len() as u64));
    let head = store.audit_head(&account).await.unwrap().unwrap();
    assert_eq!(&head, entries.last().unwrap());
    assert_eq!(head.request_id, Some(request.id));
    assert_eq!(head.data["status"], "completed");
    assert_eq!(head.data["response_data"], json!(7));
    assert_eq!(head.data["reviewer"], json!(reviewer));
    assert_eq!(head.data["event_id"], fixtures::oid(91).to_string());

    // Paging goes on from a number.
    let rest = store.audit_entries(&account, 2, 100).await.unwrap();
    assert_eq!(rest.first().map(|e| e.seq), Some(3));
    assert_eq!(store.audit_entries(&account, 0, 1).await.unwrap().len(), 1);
    assert!(store.audit_accounts().await.unwrap().contains(&account));
    // Another account's log holds none of it.
    let stranger = UserId::new(fixtures::oid(77));
    assert!(store
        .audit_entries(&stranger, 0, 100)
        .await
        .unwrap()
        .is_empty());
}

async fn a_hand_edit_breaks_the_chain_at_that_entry(db: TestDb) {
    let store = db.store();
    let lp = fixtures::loop_with_members(&store, 10, "ABCDEF").await;
    for n in 0..4u8 {
        let request = fixtures::request(&lp, 20 + n, "high", i64::from(n));
        let event = fixtures::event_for(&request, &lp, 90 + n, EventType::RequestCreated);
        store.insert_request(&request, &[event]).await.unwrap();
    }
    let account = lp.creator_id.to_string();
    // Linked in two passes: the chain goes on where the first left it.
    store.link_audit(2).await.unwrap();
    store.link_audit(1000).await.unwrap();
    let entries = store.audit_entries(&lp.creator_id, 0, 100).await.unwrap();
    assert_eq!(verify_chain(&entries), Ok(entries.len() as u64));
    let n = entries.len() as i64;
    assert!(n >= 5);
    db.db
        .run(move |conn| {
            diesel::update(
                audit_entries::table
                    .filter(audit_entries::account_id.eq(&account))
                    .filter(audit_entries::seq.eq(3)),
            )
            .set(audit_entries::action.eq("request.cancelled"))
            .execute(conn)?;
            Ok(())
        })
        .await
        .unwrap();
    let entries = store.audit_entries(&lp.creator_id, 0, 100).await.unwrap();
    assert_eq!(verify_chain(&entries), Err(ChainBreak::Changed { seq: 3 }));
}

on_every_backend!(
    every_change_is_chained_in_its_accounts_log,
    a_hand_edit_breaks_the_chain_at_that_entry,
);

/// The linker's idle check runs every 200 ms on every instance: it must
/// not walk the chain's index (a scan that grows with the log) on a file
/// without statistics, which is what a service's SQLite file has.
#[tokio::test]
async fn the_linkers_idle_check_reads_only_unlinked_entries() {
    let db = TestDb::sqlite();
    let plan = db.plan_of(first_unlinked()).await;
    // A scan of the partial index reads unlinked entries alone.
    assert!(
        !plan.is_empty()
            && plan
                .iter()
                .all(|d| d.contains("INDEX audit_entries_unlinked")),
        "{plan:?}"
    );
}

/// Verifying every account lists them from the chain's index, not by
/// reading every entry's text.
#[tokio::test]
async fn the_accounts_to_verify_are_read_from_the_chains_index() {
    let db = TestDb::sqlite();
    let plan = db.plan_of(chained_accounts()).await;
    assert!(
        plan.iter()
            .any(|d| d.contains("COVERING INDEX audit_entries_chain")),
        "{plan:?}"
    );
    assert!(!plan.iter().any(|d| d.contains("TEMP B-TREE")), "{plan:?}");
}
