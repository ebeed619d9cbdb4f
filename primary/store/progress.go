package store

// Progress keeps each response's latest report_progress snapshot.
type Progress interface{}
