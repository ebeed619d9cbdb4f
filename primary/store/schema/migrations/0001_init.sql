-- 0001: the continuations outbox, conversation modes and the audit log.
-- Times are Unix nanoseconds (UTC); a timestamp column would keep only microseconds on
-- PostgreSQL. SQLite tables are STRICT: a value of the wrong type is an error.

CREATE TABLE continuations (
  id              {{id}}, -- never reused: ids increase in enqueue order
  idempotency_key TEXT    NOT NULL UNIQUE CHECK ({{octets "idempotency_key"}} BETWEEN 1 AND 256),
  channel         TEXT    NOT NULL CHECK (channel <> ''),
  thread          TEXT    NOT NULL,
  text            TEXT    NOT NULL,
  created_at      {{int64}} NOT NULL,
  delivered_count INTEGER NOT NULL DEFAULT 0,
  acked_at        {{int64}}
) {{strict}};

-- What Subscribe reads: the pending ones, in id order.
CREATE INDEX continuations_pending ON continuations (id) WHERE acked_at IS NULL;

CREATE TABLE conversation_modes (
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  mode       TEXT    NOT NULL CHECK (mode IN ('ask', 'auto', 'admin')),
  updated_at {{int64}} NOT NULL,
  updated_by TEXT    NOT NULL CHECK (updated_by <> ''),
  PRIMARY KEY (channel, thread)
) {{strict}};

CREATE TABLE audit_log (
  id      {{id}},
  at      {{int64}} NOT NULL,
  actor   TEXT    NOT NULL CHECK (actor <> ''),
  action  TEXT    NOT NULL CHECK (action <> ''),
  subject TEXT    NOT NULL,
  detail  TEXT    NOT NULL CHECK {{json_is "detail" "object"}}
) {{strict}};

CREATE INDEX audit_log_subject ON audit_log (subject, id);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
