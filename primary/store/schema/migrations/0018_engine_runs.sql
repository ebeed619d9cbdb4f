-- 0018: background agents run by an engine driver. A job names its engine and keeps how the
-- engine's run went (engine_run, JSON: session, turns, cost, stop reason, errors). A job parked
-- on a tool use that waits for people keeps its status running with no process; parking
-- (JSON) says what resumes it, and the prompt it waits on names the job, so the prompt stays
-- open across restarts and its decision resumes the job.

ALTER TABLE jobs ADD COLUMN engine TEXT NOT NULL DEFAULT '' CHECK ({{octets "engine"}} <= 32);
ALTER TABLE jobs ADD COLUMN engine_run TEXT NOT NULL DEFAULT '' CHECK ({{octets "engine_run"}} <= 65536);
ALTER TABLE jobs ADD COLUMN parking TEXT NOT NULL DEFAULT '' CHECK ({{octets "parking"}} <= 65536);

ALTER TABLE prompts ADD COLUMN parked_job {{int64}};

CREATE INDEX prompts_parked ON prompts (parked_job) WHERE parked_job IS NOT NULL;
