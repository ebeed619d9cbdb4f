// Package shellmode checks that an agent's shell can run in the minimal shell mode before an
// operator stores that mode, a runtime opens a response in it or a background agent starts in
// it: the shell toolkit is in the response's toolkit selection and offers its run, check and
// kill functions to the agent, and the place the agent's shells run is ready (for the primary's own shell: a writable
// workspace, an answering Agent CLI listener and an executable agent_cli_bin/mindroom-agent; for
// a worker key: a connected worker whose sandbox proxy is known). Every check runs every time, so
// an operator sees every problem, each with its fix, at once.
//
// It does not store modes (the store does), decide who may set them (package operator does) or
// change any response: an open response keeps the mode it started with.
package shellmode
