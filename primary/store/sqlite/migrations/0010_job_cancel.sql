-- 0010: a cancel asked for while a worker job's worker was away is kept, and sent when the
-- worker reports the job again.

ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1));
