package jobs

import "strconv"

// ReportKey is the idempotency key of the continuation a job's end enqueues: its report. It
// keeps the report single however often the end is told, and names it for whoever reads the
// report again (the thread feed).
func ReportKey(jobID int64) string { return "job:" + strconv.FormatInt(jobID, 10) }
