CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);
INSERT INTO notes(text) VALUES ('hello');
