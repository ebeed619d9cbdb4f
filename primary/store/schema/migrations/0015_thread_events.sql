-- 0015: the thread feed: every change of an item people see in a conversation's thread, in
-- commit order (package store, ThreadEvents).
--
-- An event names its item (kind, key) and what happened; the item's record holds the rest.
-- Ids never go back and are never reused: a reader resumes after the last id it read. On
-- PostgreSQL an appending transaction holds the outbox's advisory lock to its commit, so ids
-- commit in order; SQLite has one writer. Rows are never deleted, which the trigger makes
-- sure of on SQLite, whose rowids would otherwise start again below a deleted top.

CREATE TABLE thread_events (
  id      {{if postgres}}BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY{{else}}INTEGER PRIMARY KEY{{end}},
  at      {{int64}} NOT NULL,
  channel TEXT    NOT NULL CHECK (channel <> ''),
  thread  TEXT    NOT NULL,
  kind    TEXT    NOT NULL CHECK (kind IN ('approval', 'prompt', 'call_approval', 'question', 'progress', 'job')),
  key     TEXT    NOT NULL CHECK (key <> ''),
  change  TEXT    NOT NULL CHECK (change IN ('opened', 'updated', 'closed'))
) {{strict}};
{{if not postgres}}
CREATE TRIGGER thread_events_append_only BEFORE DELETE ON thread_events
BEGIN
  SELECT RAISE(ABORT, 'thread_events is append-only');
END;
{{end}}
