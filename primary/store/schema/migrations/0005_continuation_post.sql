-- 0005: a continuation can ask to be posted as it is (a background agent's report) rather
-- than resume a model turn.

ALTER TABLE continuations ADD COLUMN post {{flag "post"}};
