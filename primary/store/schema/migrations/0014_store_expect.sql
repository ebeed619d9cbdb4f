-- 0014: store_expect, the check a PostgreSQL transaction sends with its commit.
--
-- A write transaction may send every statement and its COMMIT in one round trip (package
-- postgres, pipeline.go), so a statement's result is read only after the commit was asked
-- for. Where a write must not be kept unless a compare-and-set before it matched (an
-- approval's audit entry, a job's continuation), the transaction queues
-- SELECT store_expect(cond) between them: a false cond raises SQLSTATE TC001, which aborts the
-- transaction, so the server answers the COMMIT with a rollback and the driver reports the
-- unmatched state (store.ErrUnmatched). SQLite reads each statement before the next runs and
-- needs no such function.
{{if postgres}}
CREATE FUNCTION store_expect(cond boolean) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF cond IS NOT TRUE THEN
    RAISE EXCEPTION 'the record was not in the state the transaction expected' USING ERRCODE = 'TC001';
  END IF;
  RETURN true;
END
$$;
{{end}}
