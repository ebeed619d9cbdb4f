// Package interaction is the built-in `interaction` toolkit: the tools an agent (or its
// engine) calls to hand work to the primary and to involve people (contract: interaction
// controls). It implements run_in_background and run_agent_in_background (the
// conversation-mode gates, durable exact-command approvals and their decisions, the engines
// that run background agents as Bash commands of their own responses), request_approval and
// permission_prompt (bounded waits for a person, masking, allow-lists), report_progress
// (snapshots shown live) and ask_questions (forms, drafts, submissions); and the decisions
// people make on all of them through the operator API.
//
// The tools come in four families, one type and one file family each (families.go): Background
// (the two background tools and durable approvals), Prompts (request_approval,
// permission_prompt), Questions (ask_questions) and Progress (report_progress). Service is the
// toolkit that offers the six tools and hands each call to its family; the operator API and
// the composition root hold the families themselves. docs/ARCHITECTURE.md maps the packages.
//
// It does not run or supervise processes (package jobs does), keep state (the store does) or
// authenticate people (package operator does; this package decides what an authenticated
// operator's decision does).
package interaction
