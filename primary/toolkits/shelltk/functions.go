package shelltk

import (
	"encoding/json"

	"github.com/turncli/turncli/primary/catalog"
)

// definition is the toolkit's instructions and functions in catalog order.
func definition() catalog.Definition {
	return catalog.Definition{
		Instructions: []string{
			"Nested commands run in the calling command's window: their own mindroom-agent calls join that window while it is open.",
		},
		Functions: []catalog.Function{
			{
				Name:        "run_shell_command",
				Description: "Run a nested Bash command and return its exit code and output, or a handle if it is still running.",
				InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
					`"properties":{` +
					`"command":{"type":"string","minLength":1,"maxLength":100000,"description":"The Bash script to run."},` +
					`"timeout_seconds":{"type":"number","minimum":1,"maximum":3600,"default":120,"description":"Stop the command (TERM, then KILL) after this many seconds."},` +
					`"wait_seconds":{"type":"number","minimum":0,"maximum":600,"default":30,"description":"How long to wait before returning a handle and leaving the command running in the background."}},` +
					`"required":["command"],"additionalProperties":false}`),
				Instructions: []string{
					`A command still running after wait_seconds returns {"handle","status":"running"} with its output so far; ` +
						"follow it with check_shell_command or stop it with kill_shell_command. " +
						"Background commands stop when the response ends. Output keeps the first and last parts of each stream.",
				},
				// A command still running after wait_seconds goes on in the background, past the
				// Bash command that called it.
				Traits: backgroundTraits,
			},
			{
				Name:        "check_shell_command",
				Description: "Report a background shell command's status and output; once it has exited, its handle is released.",
				InputSchema: handleSchema,
				// It only observes background commands, which exist only where
				// run_shell_command is offered; offering it alone would advertise a function
				// with nothing to act on.
				Traits: backgroundTraits,
			},
			{
				Name:        "kill_shell_command",
				Description: "Stop a background shell command (TERM, then KILL), wait for it to exit and return its final status.",
				InputSchema: handleSchema,
				// As check_shell_command: it manages work that outlives the calling command.
				Traits: backgroundTraits,
			},
		},
	}
}

// backgroundTraits mark the functions of commands that outlive the calling Bash command: the
// standard shell mode, which offers only functions that finish inside the command, hides them.
var backgroundTraits = catalog.Traits{ExternalExecution: true}

var handleSchema = json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"properties":{"handle":{"type":"string","minLength":1,"maxLength":128,"description":"The handle run_shell_command returned."}},` +
	`"required":["handle"],"additionalProperties":false}`)
