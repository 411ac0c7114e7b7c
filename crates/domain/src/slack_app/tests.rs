use serde_json::json;

use super::*;

#[test]
fn a_slack_app_needs_a_bot_token_a_signing_secret_and_a_channel() {
    let app = SlackApp::parse(&json!({
        "bot_token": " xoxb-123-456-abc ",
        "signing_secret": "8f742231b10e8888abcd99yyyzzz85a5",
        "channel": "#reviews",
    }))
    .unwrap();
    assert_eq!(app.bot_token, "xoxb-123-456-abc");
    assert_eq!(app.channel, "#reviews");
    let shown = format!("{app:?}");
    assert!(
        !shown.contains("xoxb") && !shown.contains("8f74"),
        "{shown}"
    );

    let err = SlackApp::parse(&json!({"bot_token": "xoxp-user", "channel": "# no"})).unwrap_err();
    let fields: Vec<&str> = err.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "slack_app.bot_token",
            "slack_app.signing_secret",
            "slack_app.channel"
        ]
    );
    assert_eq!(
        SlackApp::parse(&json!("xoxb-1")).unwrap_err().errors[0].field,
        "slack_app"
    );
}
