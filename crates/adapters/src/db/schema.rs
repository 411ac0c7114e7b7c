//! The tables, in the column types every backend shares (text, integers,
//! booleans, doubles, timestamps), so one schema serves SQLite and PostgreSQL.

diesel::table! {
    answer_links (token_hash) {
        token_hash -> Text,
        request_id -> Text,
        user_id -> Text,
        answer -> Text,
        label -> Text,
        created_at -> Timestamp,
        used_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    vapid_keys (id) {
        id -> Integer,
        public_key -> Text,
        secret_key -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    push_subscriptions (id) {
        id -> Text,
        user_id -> Text,
        endpoint -> Text,
        p256dh -> Text,
        auth -> Text,
        device -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    users (id) {
        id -> Text,
        email -> Text,
        status -> Text,
        signing_secret -> Text,
        created_at -> Timestamp,
        password_hash -> Nullable<Text>,
    }
}

diesel::table! {
    web_sessions (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        csrf_token -> Text,
        created_at -> Timestamp,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    password_tokens (token_hash) {
        token_hash -> Text,
        user_id -> Text,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        user_id -> Text,
        name -> Nullable<Text>,
        key_hash -> Text,
        prefix -> Text,
        permissions -> Text,
        rate_limit -> BigInt,
        created_at -> Timestamp,
        revoked_at -> Nullable<Timestamp>,
        plan -> Text,
        test -> Bool,
    }
}

diesel::table! {
    loops (id) {
        id -> Text,
        name -> Text,
        description -> Nullable<Text>,
        icon -> Text,
        creator_id -> Text,
        invite_code -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        slack_webhook_url -> Nullable<Text>,
        reminders -> Bool,
        policy -> Nullable<Text>,
        slack_app -> Nullable<Text>,
    }
}

diesel::table! {
    slack_posts (request_id, loop_id) {
        request_id -> Text,
        loop_id -> Text,
        channel -> Text,
        ts -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    loop_members (loop_id, user_id) {
        loop_id -> Text,
        user_id -> Text,
        email -> Text,
        status -> Text,
        invited_at -> Timestamp,
        joined_at -> Nullable<Timestamp>,
        removed_at -> Nullable<Timestamp>,
        notify -> Text,
    }
}

diesel::table! {
    notices (id) {
        id -> Text,
        kind -> Text,
        channel -> Text,
        account_id -> Text,
        loop_id -> Nullable<Text>,
        request_id -> Nullable<Text>,
        recipient_id -> Nullable<Text>,
        recipient_email -> Nullable<Text>,
        subject -> Text,
        body_text -> Text,
        body_html -> Nullable<Text>,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        leased_until -> Nullable<Timestamp>,
        last_error -> Nullable<Text>,
        created_at -> Timestamp,
        sent_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    requests (id) {
        id -> Text,
        loop_id -> Text,
        creator_id -> Text,
        api_key_id -> Nullable<Text>,
        processing_type -> Text,
        content_type -> Text,
        priority -> Text,
        priority_rank -> Integer,
        request_text -> Text,
        image_url -> Nullable<Text>,
        context -> Nullable<Text>,
        platform -> Text,
        platform_version -> Nullable<Text>,
        response_type -> Text,
        response_config -> Text,
        default_response -> Nullable<Text>,
        timeout_at -> Timestamp,
        callback_url -> Nullable<Text>,
        metadata -> Nullable<Text>,
        broadcasted_at -> Nullable<Timestamp>,
        status -> Text,
        claimed_by -> Nullable<Text>,
        claimed_at -> Nullable<Timestamp>,
        response_by -> Nullable<Text>,
        response_at -> Nullable<Timestamp>,
        response_data -> Nullable<Text>,
        response_time_seconds -> Nullable<Double>,
        cancelled_at -> Nullable<Timestamp>,
        feedback -> Nullable<Text>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        version -> BigInt,
        remind_at -> Nullable<Timestamp>,
        reminded_at -> Nullable<Timestamp>,
        tags -> Nullable<Text>,
        receipt -> Nullable<Text>,
        quorum -> Nullable<Text>,
        escalation -> Nullable<Text>,
        escalate_at -> Nullable<Timestamp>,
        escalated_at -> Nullable<Timestamp>,
        escalated_to -> Nullable<Text>,
        applied_rules -> Nullable<Text>,
        test -> Bool,
        test_answer -> Nullable<Text>,
        test_due_at -> Nullable<Timestamp>,
        response_comment -> Nullable<Text>,
        coalesce_key -> Nullable<Text>,
        coalesce_slot -> Nullable<Text>,
        coalesced_into -> Nullable<Text>,
        reused_from -> Nullable<Text>,
        reassign_after_seconds -> Nullable<BigInt>,
        offered_at -> Nullable<Timestamp>,
        reassign_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    loop_turns (loop_id) {
        loop_id -> Text,
        turn -> BigInt,
    }
}

diesel::table! {
    audit_entries (id) {
        id -> BigInt,
        account_id -> Text,
        seq -> Nullable<BigInt>,
        at -> Timestamp,
        action -> Text,
        loop_id -> Nullable<Text>,
        request_id -> Nullable<Text>,
        data -> Text,
        prev_hash -> Nullable<Text>,
        hash -> Nullable<Text>,
    }
}

diesel::table! {
    receipt_keys (key_id) {
        key_id -> Text,
        public_key -> Text,
        secret_key -> Text,
        created_at -> Timestamp,
        retired_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    request_broadcasts (request_id, user_id) {
        request_id -> Text,
        user_id -> Text,
        position -> Integer,
        email -> Text,
        role -> Text,
        notification_sent -> Bool,
        notification_error -> Nullable<Text>,
        answer -> Nullable<Text>,
        answered_at -> Nullable<Timestamp>,
        comment -> Nullable<Text>,
    }
}

diesel::table! {
    outbox_events (seq) {
        seq -> BigInt,
        id -> Text,
        event_type -> Text,
        account_id -> Text,
        request_id -> Nullable<Text>,
        loop_id -> Nullable<Text>,
        payload -> Text,
        created_at -> Timestamp,
        dispatched_at -> Nullable<Timestamp>,
        position -> Nullable<BigInt>,
        test -> Bool,
    }
}

diesel::table! {
    webhooks (id) {
        id -> Text,
        account_id -> Text,
        url -> Text,
        events -> Text,
        secret -> Text,
        description -> Nullable<Text>,
        active -> Bool,
        disabled_reason -> Nullable<Text>,
        failing_since -> Nullable<Timestamp>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        test -> Bool,
    }
}

diesel::table! {
    test_clocks (account_id) {
        account_id -> Text,
        offset_seconds -> BigInt,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    deliveries (id) {
        id -> Text,
        event_id -> Text,
        event_type -> Text,
        account_id -> Text,
        target -> Text,
        webhook_id -> Nullable<Text>,
        url -> Text,
        payload -> Text,
        status -> Text,
        attempts -> Integer,
        schedule_start -> Integer,
        next_attempt_at -> Timestamp,
        leased_until -> Nullable<Timestamp>,
        last_attempt_at -> Nullable<Timestamp>,
        last_status_code -> Nullable<Integer>,
        last_error -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    delivery_attempts (delivery_id, attempt) {
        delivery_id -> Text,
        attempt -> Integer,
        attempted_at -> Timestamp,
        status_code -> Nullable<Integer>,
        latency_ms -> BigInt,
        error -> Nullable<Text>,
        success -> Bool,
    }
}

diesel::table! {
    rate_limit_windows (api_key_id, window_start) {
        api_key_id -> Text,
        window_start -> BigInt,
        calls -> Integer,
    }
}

diesel::table! {
    request_sweeps (request_id) {
        request_id -> Text,
        leased_until -> Timestamp,
    }
}

diesel::table! {
    templates (id) {
        id -> Text,
        account_id -> Text,
        name -> Text,
        description -> Nullable<Text>,
        fields -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    reviews (id) {
        id -> Text,
        account_id -> Text,
        template_id -> Text,
        fields -> Text,
        content_text -> Nullable<Text>,
        metadata -> Text,
        team_id -> Nullable<Text>,
        priority -> Text,
        due_date -> Nullable<Timestamp>,
        callback_url -> Nullable<Text>,
        status -> Text,
        reviewer_id -> Nullable<Text>,
        reviewer_email -> Nullable<Text>,
        started_at -> Nullable<Timestamp>,
        result -> Nullable<Text>,
        completed_at -> Nullable<Timestamp>,
        cancelled_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        version -> BigInt,
    }
}

diesel::table! {
    review_assignees (review_id, user_id) {
        review_id -> Text,
        user_id -> Text,
        email -> Text,
        position -> Integer,
    }
}

diesel::joinable!(review_assignees -> reviews (review_id));
diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(web_sessions -> users (user_id));
diesel::joinable!(loop_members -> loops (loop_id));
diesel::joinable!(request_broadcasts -> requests (request_id));
diesel::joinable!(deliveries -> webhooks (webhook_id));
diesel::joinable!(delivery_attempts -> deliveries (delivery_id));

diesel::allow_tables_to_appear_in_same_query!(
    test_clocks,
    users,
    api_keys,
    web_sessions,
    loops,
    loop_members,
    notices,
    requests,
    request_broadcasts,
    outbox_events,
    request_sweeps,
    webhooks,
    deliveries,
    delivery_attempts,
    templates,
    reviews,
    review_assignees,
);

diesel::table! {
    idempotency_keys (api_key_id, idempotency_key) {
        api_key_id -> Text,
        idempotency_key -> Text,
        fingerprint -> Text,
        state -> Text,
        response_status -> Nullable<Integer>,
        response_body -> Nullable<Text>,
        created_at -> Timestamp,
        locked_at -> Timestamp,
    }
}
