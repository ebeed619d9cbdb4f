-- 0008: the shell mode of each agent in each conversation. A missing row means the default
-- (standard); resetting a mode deletes its row.

CREATE TABLE shell_modes (
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  agent      TEXT    NOT NULL CHECK (agent <> ''),
  mode       TEXT    NOT NULL CHECK (mode IN ('standard', 'minimal')),
  updated_at {{int64}} NOT NULL,
  updated_by TEXT    NOT NULL CHECK (updated_by <> ''),
  PRIMARY KEY (channel, thread, agent)
) {{strict}};
