package store

// Questions keeps ask_questions requests, their drafts and submissions.
type Questions interface{}
