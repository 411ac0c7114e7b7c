use reviewloop_domain::{AuditRecord, Permission};
use serde_json::json;

use super::*;
use crate::error::ServiceError;
use crate::testkit::Classed;
use crate::testkit::Kit;

fn log(kit: &Kit, account: u8, n: i64) -> Vec<AuditEntry> {
    let mut entries: Vec<AuditEntry> = Vec::new();
    for i in 0..n {
        let record = AuditRecord {
            account_id: kit.user_id(account),
            at: kit.now,
            action: "request.created".into(),
            loop_id: None,
            request_id: None,
            data: json!({"i": i}),
        };
        let next = AuditEntry::after(entries.last(), record);
        entries.push(next);
    }
    entries
}

#[tokio::test]
async fn a_caller_reads_only_its_own_log_in_pages() {
    let mut kit = Kit::new();
    let entries = log(&kit, 1, 5);
    let me = kit.user_id(1);
    let served = entries.clone();
    kit.audit()
        .expect_audit_entries()
        .withf(move |account, after, limit| *account == me && *after == 2 && *limit == 2)
        .returning(move |_, _, _| Ok(served[2..4].to_vec()));
    let head = entries.last().cloned();
    kit.audit()
        .expect_audit_head()
        .returning(move |_| Ok(head.clone()));
    kit.audit().expect_link_audit().returning(|_| Ok(0));
    let caller = kit.principal(1);
    let mut reader = kit.principal(1);
    reader.permissions = vec![Permission::LoopsRead];
    let svc = AuditService::new(kit.ports());
    let page = svc.entries(&caller, Some(2), Some(2)).await.unwrap();
    assert_eq!(page.total, 5);
    assert_eq!(
        page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [3, 4]
    );
    assert!(matches!(
        svc.entries(&caller, Some(0), None).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
    assert!(matches!(
        svc.entries(&caller, Some(1001), None).await.classed(),
        Err(ServiceError::Invalid(_))
    ));
    assert!(matches!(
        svc.entries(&reader, None, None).await.classed(),
        Err(ServiceError::Forbidden(_))
    ));
}

#[tokio::test]
async fn verify_names_the_first_break_of_each_log() {
    let mut kit = Kit::new();
    let intact = log(&kit, 1, 3);
    let mut broken = log(&kit, 2, 4);
    broken[1].data = json!({"i": "forged"});
    let (one, two) = (kit.user_id(1), kit.user_id(2));
    kit.audit()
        .expect_link_audit()
        .times(1)
        .returning(|_| Ok(3));
    kit.audit()
        .expect_audit_accounts()
        .returning(move || Ok(vec![one, two]));
    kit.audit()
        .expect_audit_entries()
        .returning(move |account, after, _| {
            let all = if *account == one { &intact } else { &broken };
            Ok(all.iter().filter(|e| e.seq > after).cloned().collect())
        });
    let (a, b) = (kit.user(1, "a@x.io"), kit.user(2, "b@x.io"));
    kit.accounts()
        .expect_user_by_id()
        .returning(move |id| Ok([a.clone(), b.clone()].into_iter().find(|u| u.id == *id)));
    let verdicts = AuditService::new(kit.ports()).verify(None).await.unwrap();
    assert_eq!(verdicts.len(), 2);
    assert_eq!(verdicts[0].broken, None);
    assert_eq!(verdicts[0].entries, 3);
    assert_eq!(
        verdicts[0].email.as_ref().map(|e| e.as_str()),
        Some("a@x.io")
    );
    assert!(verdicts[0].head.is_some());
    assert_eq!(verdicts[1].broken, Some(ChainBreak::Changed { seq: 2 }));
    assert_eq!(verdicts[1].entries, 1);
}
