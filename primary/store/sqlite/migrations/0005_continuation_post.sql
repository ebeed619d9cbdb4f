-- 0005: a continuation can ask to be posted as it is (a background agent's report) rather
-- than resume a model turn.

ALTER TABLE continuations ADD COLUMN post INTEGER NOT NULL DEFAULT 0 CHECK (post IN (0, 1));
