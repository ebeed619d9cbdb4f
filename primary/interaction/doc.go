// Package interaction is the built-in `interaction` toolkit: the tools an agent (or its
// engine) calls to hand work to the primary and to involve people (contract: interaction
// controls). It implements run_in_background and run_agent_in_background (the
// conversation-mode gates, durable exact-command approvals and their decisions, the engines
// that run background agents as Bash commands of their own responses), request_approval and
// permission_prompt (bounded waits for a person, masking, allow-lists), report_progress
// (snapshots shown live) and ask_questions (forms, drafts, submissions); and the decisions
// people make on all of them through the operator API.
//
// It does not run or supervise processes (package jobs does), keep state (the store does) or
// authenticate people (package operator does; this package decides what an authenticated
// operator's decision does).
package interaction
