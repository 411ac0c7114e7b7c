DROP TABLE answer_links;
