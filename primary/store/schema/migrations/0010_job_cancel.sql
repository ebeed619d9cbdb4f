-- 0010: a cancel asked for while a worker job's worker was away is kept, and sent when the
-- worker reports the job again.

ALTER TABLE jobs ADD COLUMN cancel_requested {{flag "cancel_requested"}};
