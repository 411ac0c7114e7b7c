-- A reviewer may leave a comment with an answer: the deciding answer's on
-- the request, each quorum answer's beside it on its broadcast entry.
ALTER TABLE requests ADD COLUMN response_comment TEXT;
ALTER TABLE request_broadcasts ADD COLUMN comment TEXT;
