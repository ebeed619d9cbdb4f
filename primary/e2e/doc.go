// Package e2e holds end-to-end tests of the primary: real Bash commands started through
// ResponseService call the Agent CLI of a real primary on loopback, with curl or mindroom-agent.
package e2e
