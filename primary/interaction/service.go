package interaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/turncli/turncli/internal/clock"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/secrets"
	"github.com/turncli/turncli/primary/store"
)

// Name is the toolkit's selector.
const Name = response.InteractionToolkit

// Store is the durable state the toolkit reads and writes.
type Store interface {
	store.ConversationModes
	store.Approvals
	store.Operators
	store.Continuations
	store.Prompts
	store.Questions
	store.Progress
	store.Jobs
}

// Config is what the toolkit needs: the interaction tools' section a person configures
// (Settings), whole, and the engines and stores the primary builds.
type Config struct {
	// Settings set the prompts' wait and the background agents' engine; New fills its zero
	// fields as the section's Validate does and refuses an engine it cannot parse.
	Settings  Settings
	Store     Store
	Jobs      *jobs.Manager
	Responses *response.Manager
	// Shells is the primary's own shell host: workspaces and environments of local jobs.
	Shells *shellhost.Runner
	// Preflight checks a background agent's shell before the agent starts in the minimal
	// shell mode (shellmode.Preflight, the check of SetShellMode and OpenResponse).
	Preflight ShellPreflight
	// Notify is called after a commit that wrote a continuation.
	Notify func()
	// Secrets are the primary's live secrets, redacted from the copies of tool inputs people
	// see and logs keep (nil: none are known).
	Secrets *secrets.Registry
	// Clock measures Settings.PromptWait and dates progress reports (clock.System when nil).
	Clock clock.Clock
	// Events receives every change people should see live; nil publishes nothing.
	Events *events.Bus
	Logger *slog.Logger
}

// DefaultPromptWait is how long request_approval and permission_prompt wait for a person.
const DefaultPromptWait = 280 * time.Second

// Service is the interaction toolkit: it offers the six tools and hands each call to its
// family. People's decisions go to the families directly. It is safe for concurrent use.
type Service struct {
	Background *Background
	Prompts    *Prompts
	Questions  *Questions
	Progress   *Progress
}

var (
	_ catalog.Toolkit    = (*Service)(nil)
	_ catalog.Advertiser = (*Service)(nil)
)

// New returns the toolkit.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Jobs == nil || cfg.Responses == nil || cfg.Shells == nil || cfg.Preflight == nil {
		return nil, errors.New("interaction: Store, Jobs, Responses, Shells and Preflight are required")
	}
	if cfg.Notify == nil {
		cfg.Notify = func() {}
	}
	if cfg.Secrets == nil {
		cfg.Secrets = secrets.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Settings = cfg.Settings.withDefaults()
	engine, err := cfg.Settings.Engine()
	if err != nil {
		return nil, fmt.Errorf("interaction: agent engine: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.Events == nil {
		cfg.Events = events.New()
	}
	f := family{cfg: cfg, engine: engine, log: cfg.Logger.With("component", "interaction")}
	return &Service{Background: &Background{f}, Prompts: &Prompts{f}, Questions: &Questions{f}, Progress: &Progress{f}}, nil
}

// Name returns "interaction".
func (s *Service) Name() string { return Name }

// Description is shown by discovery.
func (s *Service) Description() string {
	return "Hand work to the primary and involve people: background commands and agents, approvals, permission prompts, progress reports and questions."
}

// Deferred reports false: the definition is static.
func (s *Service) Deferred() bool { return false }

// Load returns the toolkit's functions.
func (s *Service) Load(context.Context) (catalog.Definition, error) { return definition(), nil }

// Call runs one function.
func (s *Service) Call(ctx context.Context, call catalog.Call) (catalog.Result, error) {
	switch call.Function {
	case "run_in_background":
		return s.Background.runInBackground(ctx, call)
	case "run_agent_in_background":
		return s.Background.runAgentInBackground(ctx, call)
	case "request_approval":
		return s.Prompts.requestApproval(ctx, call)
	case "report_progress":
		return s.Progress.reportProgress(ctx, call)
	case "permission_prompt":
		return s.Prompts.permissionPrompt(ctx, call)
	case "ask_questions":
		return s.Questions.askQuestions(ctx, call)
	default:
		return catalog.Result{}, fmt.Errorf("interaction has no function %q", call.Function)
	}
}

// Offers implements catalog.Advertiser: report_progress only for responses with the
// progress_report flag; ask_questions only for foreground responses with a trusted requester
// and a real thread.
func (s *Service) Offers(function string, id catalog.Identity) bool {
	switch function {
	case "report_progress":
		return slices.Contains(id.Flags, response.FlagProgressReport)
	case "ask_questions":
		return vouchedForeground(id) && id.Thread != ""
	default:
		return true
	}
}

func definition() catalog.Definition {
	return catalog.Definition{
		Instructions: []string{
			"Background work reports back by resuming this conversation when it ends: after starting it, end your turn and do not poll for it.",
		},
		Functions: []catalog.Function{
			runInBackgroundFunction(), runAgentInBackgroundFunction(), requestApprovalFunction(),
			reportProgressFunction(), permissionPromptFunction(), askQuestionsFunction(),
		},
	}
}

func runInBackgroundFunction() catalog.Function {
	return catalog.Function{
		Name: "run_in_background",
		Description: "Run a shell command in the background, where this conversation's shells run, and resume the conversation with its outcome. " +
			"Needs the conversation's mode to allow it: auto (an admin approves each command) or admin (an admin's commands start at once).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The Bash command, at most 2000 characters; put anything longer in a script file and run that."},` +
			`"label":{"type":"string","description":"A short name people see for the job (at most 120 characters)."}},` +
			`"required":["command"],"additionalProperties":false}`),
		// The job outlives the command, and its outcome resumes the conversation: the agent
		// should end its turn rather than wait for it.
		Traits: catalog.Traits{ExternalExecution: true, EndsTurn: true},
	}
}

func runAgentInBackgroundFunction() catalog.Function {
	return catalog.Function{
		Name: "run_agent_in_background",
		Description: "Start a separate agent that works alone on a task in the background; its final report is posted to this conversation when it ends. " +
			"Give it a complete, self-contained brief: it sees nothing of this conversation.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"task":{"type":"string","description":"The complete, self-contained brief."},` +
			`"label":{"type":"string","description":"A short name people see for the job (at most 120 characters)."}},` +
			`"required":["task"],"additionalProperties":false}`),
		// The agent runs after the command ends and reports by resuming the conversation.
		Traits: catalog.Traits{ExternalExecution: true, EndsTurn: true},
	}
}
