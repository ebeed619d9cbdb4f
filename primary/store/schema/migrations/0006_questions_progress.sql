-- 0006: ask_questions requests and report_progress snapshots.
--
-- A question request moves pending → submitted | cancelled. The CHECKs tie each state to the
-- columns it needs: answers and submitted_at exactly when submitted, cancelled_by and
-- cancelled_at exactly when cancelled.

CREATE TABLE question_requests (
  id           {{id}},
  key          TEXT    NOT NULL CHECK (length(key) = 64), -- hex SHA-256 of what is asked
  channel      TEXT    NOT NULL CHECK (channel <> ''),
  thread       TEXT    NOT NULL CHECK (thread <> ''),
  requester    TEXT    NOT NULL CHECK (requester <> ''),
  agent        TEXT    NOT NULL,
  response_id  TEXT    NOT NULL,
  title        TEXT    NOT NULL CHECK (title <> ''),
  presentation TEXT    NOT NULL CHECK (presentation IN ('auto', 'message', 'modal')),
  questions    TEXT    NOT NULL CHECK {{json_is "questions" "array"}},
  status       TEXT    NOT NULL CHECK (status IN ('pending', 'submitted', 'cancelled')),
  revision     INTEGER NOT NULL CHECK (revision >= 1),
  draft        TEXT    NOT NULL CHECK {{json_is "draft" "object"}},
  answers      TEXT             CHECK (answers IS NULL OR {{json_is "answers" "object"}}),
  created_at   {{int64}} NOT NULL,
  updated_at   {{int64}} NOT NULL,
  submitted_at {{int64}},
  cancelled_by TEXT    NOT NULL DEFAULT '',
  cancelled_at {{int64}},
  CHECK ((status = 'submitted') = (answers IS NOT NULL)),
  CHECK ((status = 'submitted') = (submitted_at IS NOT NULL)),
  CHECK ((status = 'cancelled') = (cancelled_by <> '')),
  CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
) {{strict}};

-- One pending request per person and thread: two different forms can never wait at once,
-- even when two saves race from two processes.
CREATE UNIQUE INDEX question_requests_pending ON question_requests (channel, thread, requester)
  WHERE status = 'pending';

-- Listing by state, by conversation and by person.
CREATE INDEX question_requests_status ON question_requests (status, id);
CREATE INDEX question_requests_conversation ON question_requests (channel, thread, id);
CREATE INDEX question_requests_requester ON question_requests (requester, id);

-- The latest snapshot of each response; a new report replaces it.
CREATE TABLE progress_snapshots (
  response_id TEXT    PRIMARY KEY CHECK (response_id <> ''),
  channel     TEXT    NOT NULL CHECK (channel <> ''),
  thread      TEXT    NOT NULL,
  agent       TEXT    NOT NULL,
  requester   TEXT    NOT NULL,
  title       TEXT    NOT NULL CHECK (title <> ''),
  steps       TEXT    NOT NULL CHECK ({{json_is "steps" "array"}} AND json_array_length({{json "steps"}}) >= 1),
  updated_at  {{int64}} NOT NULL
) {{strict}};

CREATE INDEX progress_snapshots_updated ON progress_snapshots (updated_at, response_id);
CREATE INDEX progress_snapshots_conversation ON progress_snapshots (channel, thread, updated_at);
