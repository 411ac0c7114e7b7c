DROP TABLE review_assignees;
DROP TABLE reviews;
