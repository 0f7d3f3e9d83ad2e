
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version(version) VALUES (0);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  code TEXT NOT NULL,
  language TEXT NOT NULL,
  backend TEXT NOT NULL,
  timeout_ms INTEGER NOT NULL,
  limits_json TEXT NOT NULL,
  env_names_json TEXT NOT NULL,
  outcome TEXT NOT NULL,
  limit_kind TEXT,
  exit_code INTEGER NOT NULL,
  wall_ms INTEGER NOT NULL,
  stdout BLOB NOT NULL,
  stderr BLOB NOT NULL,
  result_json TEXT NOT NULL);

ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'unknown';
CREATE INDEX runs_by_start ON runs(started_ms);

ALTER TABLE runs ADD COLUMN input_files_cbor BLOB;
ALTER TABLE runs ADD COLUMN artifact_globs_json TEXT NOT NULL DEFAULT '[]';

ALTER TABLE runs ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_source ON runs(source);
UPDATE schema_version SET version = 4;
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json,input_files_cbor,artifact_globs_json,client) VALUES (9223372036854775807,-9223372036854775808,X'00ff','py','',1e300,'[',5,'limit_exceeded','disk','x',-1,'',1.5,'{',X'a1',NULL,X'00');
