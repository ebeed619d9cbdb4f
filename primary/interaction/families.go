package interaction

import "log/slog"

// The toolkit's four families, each the one home of its tools' rules and of the decisions
// people make on them. They share nothing but the toolkit's Config; none calls another.
type (
	// Background is run_in_background and run_agent_in_background: the conversation-mode
	// gates, durable exact-command approvals and their decisions (Approve, Deny, Comment), and
	// the engines that run background agents (files background.go, agent.go, approvals.go,
	// gates.go, engine.go).
	Background struct{ family }
	// Prompts is request_approval and permission_prompt: a bounded wait for a person, the
	// masked copy people see, the allow-lists, and the decisions (files request_approval.go,
	// permission*.go, prompt_*.go).
	Prompts struct{ family }
	// Questions is ask_questions: forms, drafts saved, answers submitted once, cancellation
	// (files questions*.go).
	Questions struct{ family }
	// Progress is report_progress: plans validated and snapshots shown live (files
	// progress*.go).
	Progress struct{ family }
)

// family is what every family holds: the toolkit's dependencies and its logger.
type family struct {
	cfg Config
	// engine runs background agents (Settings.AgentEngine, parsed); an empty Command refuses
	// run_agent_in_background.
	engine Engine
	log    *slog.Logger
}
