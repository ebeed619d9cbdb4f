package jobs

import (
	"context"
	"maps"
	"regexp"
	"strings"

	"github.com/turncli/turncli/internal/telemetry"
)

// agentCLIKeys are the Agent CLI variables the primary may set; the URL is the worker's own.
var agentCLIKeys = []string{"MINDROOM_AGENT_CLI_TOKEN", "MINDROOM_AGENT_CLI_WINDOW"}

// extraKey is what an extra variable's name must look like.
var extraKey = regexp.MustCompile(`^MINDROOM_AGENT_[A-Z_]+$`)

// jobEnv is the part of a job's environment the primary decides: the token and window from
// agentCLI with the proxy URL (only for a job given a grant: a command job gets no Agent CLI
// at all), the extra variables whose names are allowed, and TRACEPARENT and TRACESTATE when
// traceparent is well-formed. Everything else the primary sent is dropped, so it can never set
// PATH, LD_PRELOAD or the Agent CLI URL.
func jobEnv(url string, agentCLI, extra map[string]string, traceparent, tracestate string) map[string]string {
	out := make(map[string]string, 5+len(extra))
	// Re-encoded from the parsed context: only a valid trace context reaches the job.
	maps.Copy(out, telemetry.ShellEnv(telemetry.Extract(context.Background(), traceparent, tracestate)))
	for k, v := range extra {
		if extraKey.MatchString(k) && !strings.HasPrefix(k, "MINDROOM_AGENT_CLI_") {
			out[k] = v
		}
	}
	granted := false
	for _, k := range agentCLIKeys {
		if v, ok := agentCLI[k]; ok {
			out[k] = v
			granted = true
		}
	}
	if granted {
		out["MINDROOM_AGENT_CLI_URL"] = url
	}
	return out
}
