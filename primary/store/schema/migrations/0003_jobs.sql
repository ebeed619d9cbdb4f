-- 0003: background jobs. A job is inserted running (pid 0 until its process is recorded) and
-- finished once; exit_code is NULL when unknown.

CREATE TABLE jobs (
  id         {{id}}, -- never reused: names the log file
  kind       TEXT    NOT NULL CHECK (kind IN ('command', 'agent')),
  command    TEXT    NOT NULL CHECK (command <> ''),
  label      TEXT    NOT NULL,
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  author     TEXT    NOT NULL,
  agent      TEXT    NOT NULL,
  workspace  TEXT    NOT NULL,
  ceiling_ns {{int64}} NOT NULL,
  log_path   TEXT    NOT NULL CHECK (log_path <> ''),
  status     TEXT    NOT NULL CHECK (status IN ('running', 'finished')),
  pid        {{int64}} NOT NULL DEFAULT 0,
  proc_start {{int64}} NOT NULL DEFAULT 0,
  created_at {{int64}} NOT NULL,
  ended_at   {{int64}},
  outcome    TEXT    NOT NULL DEFAULT '',
  exit_code  {{int64}},
  tail       TEXT    NOT NULL DEFAULT ''
) {{strict}};

-- What the caps count: the running jobs, per conversation.
CREATE INDEX jobs_running ON jobs (channel, thread) WHERE status = 'running';
{{if postgres}}
-- Listing by state; PostgreSQL's schema has had it from its first version.
CREATE INDEX jobs_status ON jobs (status, id);
{{end}}
