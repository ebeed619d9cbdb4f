-- 0011: a stored shell mode remembers the placement it was set for: the worker key whose
-- shells the minimal mode's preflight checked, or '' for the primary's own shells. A mode
-- stored before has NULL: its placement is unknown, so its minimal mode applies to no
-- response until an admin sets it again.

ALTER TABLE shell_modes ADD COLUMN worker_key TEXT;
