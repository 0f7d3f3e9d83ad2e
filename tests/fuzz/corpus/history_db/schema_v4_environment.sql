
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
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000000,1764640000010,'print(1)','python','namespace',10000,'{}','[]','ok',NULL,0,10,X'310a',X'','{"schema_version":5,"outcome":"ok","environment":{"name":"sci","digest":"sha256:aa"}}');
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000001,1764640000011,'echo','sh','namespace',10000,'{}','[]','ok',NULL,0,10,X'',X'','{"environment":{"name":"","digest":"sha256:bb"}}');
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000002,1764640000012,'echo','sh','subprocess',10000,'{}','[]','ok',NULL,0,10,X'',X'','{"environment":{"name":7,"digest":null}}');
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000003,1764640000013,'echo','sh','subprocess',10000,'{}','[]','ok',NULL,0,10,X'',X'','{"environment":');
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000004,1764640000014,'echo','sh','subprocess',10000,'{}','[]','ok',NULL,0,10,X'',X'','{"environment":null}');
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000005,1764640000015,'echo','sh','subprocess',10000,'{}','[]','ok',NULL,0,10,X'',X'',X'7b22656e7669726f6e6d656e74223aff7d');
