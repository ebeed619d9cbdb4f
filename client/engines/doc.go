// Package engines holds what every engine driver of `mindroom-agent engine NAME` shares: the
// result line a driver ends its output with, and the cleaning of the engine's own text before
// it reaches the job's log.
//
// A background agent's job runs a driver (client/engines/claude, client/engines/codex) that
// starts the real engine CLI, renders its progress as plain lines on standard output (the
// job's log), and ends with one result line: ResultPrefix followed by the Result as JSON. The
// primary reads the last such line of the job's output to learn the report and how the run
// went. Every other line the driver writes passes through Clean first, so no text of the
// engine or the model can start a line with ResultPrefix and pose as a result.
//
// Like the rest of the client, this package uses only the standard library.
package engines
