CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (4);
