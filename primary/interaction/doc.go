// Package interaction is the built-in `interaction` toolkit: the tools an agent (or its
// engine) calls to hand work to the primary and to involve people. It implements
// run_in_background and run_agent_in_background (contract: interaction controls): their
// validation, the conversation-mode gates, durable exact-command approvals and their
// decisions, and the engines that run background agents as Bash commands of their own
// responses.
//
// It does not run or supervise processes (package jobs does), keep state (the store does) or
// authenticate people (package operator does; this package decides what an authenticated
// operator's decision does).
package interaction
