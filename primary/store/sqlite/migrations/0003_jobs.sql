-- 0003: background jobs. A job is inserted running (pid 0 until its process is recorded) and
-- finished once; exit_code is NULL when unknown.

CREATE TABLE jobs (
  id         INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: names the log file
  kind       TEXT    NOT NULL CHECK (kind IN ('command', 'agent')),
  command    TEXT    NOT NULL CHECK (command <> ''),
  label      TEXT    NOT NULL,
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  author     TEXT    NOT NULL,
  agent      TEXT    NOT NULL,
  workspace  TEXT    NOT NULL,
  ceiling_ns INTEGER NOT NULL,
  log_path   TEXT    NOT NULL CHECK (log_path <> ''),
  status     TEXT    NOT NULL CHECK (status IN ('running', 'finished')),
  pid        INTEGER NOT NULL DEFAULT 0,
  proc_start INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  ended_at   INTEGER,
  outcome    TEXT    NOT NULL DEFAULT '',
  exit_code  INTEGER,
  tail       TEXT    NOT NULL DEFAULT ''
) STRICT;

-- What the caps count: the running jobs, per conversation.
CREATE INDEX jobs_running ON jobs (channel, thread) WHERE status = 'running';
