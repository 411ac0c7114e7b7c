-- Reviews: the alternate surface's requests, answered with a form. A
-- review keeps its own copy of its template's fields (`fields`, JSON
-- text), so neither an edit nor the deletion of the template changes it;
-- `team_id` names the loop whose active members get it.
CREATE TABLE reviews (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    template_id TEXT NOT NULL,
    fields TEXT NOT NULL,
    content_text TEXT,
    metadata TEXT NOT NULL,
    team_id TEXT,
    priority TEXT NOT NULL,
    due_date TIMESTAMP,
    callback_url TEXT,
    status TEXT NOT NULL,
    reviewer_id TEXT,
    reviewer_email TEXT,
    started_at TIMESTAMP,
    result TEXT,
    completed_at TIMESTAMP,
    cancelled_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    version BIGINT NOT NULL
);
CREATE INDEX reviews_by_account ON reviews (account_id, created_at);
CREATE INDEX reviews_by_team ON reviews (team_id, created_at);

CREATE TABLE review_assignees (
    review_id TEXT NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    email TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (review_id, user_id)
);
CREATE INDEX review_assignees_by_user ON review_assignees (user_id);
