DROP TABLE templates;
