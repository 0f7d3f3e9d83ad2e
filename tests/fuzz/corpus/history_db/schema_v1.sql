
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
UPDATE schema_version SET version = 1;
INSERT INTO runs(started_ms,finished_ms,code,language,backend,timeout_ms,limits_json,env_names_json,outcome,limit_kind,exit_code,wall_ms,stdout,stderr,result_json) VALUES (1764640000000,1764640000010,'print(1)','python','namespace',10000,'{"memory_bytes":268435456}','["A"]','ok',NULL,0,10,X'310a',X'','{"schema_version":2,"outcome":"ok"}');
