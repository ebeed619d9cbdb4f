package shellmode

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// AgentBinaryName is the client every shell calls, in agent_cli_bin/.
const AgentBinaryName = "mindroom-agent"

// probeClient talks only to the loopback listener: no proxy from the environment, no redirects.
func probeClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// listenerTrust is how long the Agent CLI listener, once it answered a probe, is taken to be
// answering without another. Every minimal response opened checks it, and a probe is a new
// loopback connection: on a busy primary that is a connection per turn, and the probe, not the
// listener, is what runs out of time then, refusing turns the listener would have served. The
// listener is the primary's own and stops only with it; one that stops answering (loopback
// blocked) is found at the first check a minute after its last answer.
const listenerTrust = time.Minute

// checkListener: the loopback Agent CLI listener answers an HTTP request. Any answer counts,
// an error status included: the request carries no grant, so refusing it is the listener's
// right reply.
func (p *Preflight) checkListener(ctx context.Context) []Problem {
	if p.cfg.Local == nil {
		return nil // checkWorkspace already reported the missing local shell
	}
	if at := p.listenerAnswered.Load(); at != 0 && p.cfg.Clock.Now().Sub(time.Unix(0, at)) < listenerTrust {
		return nil
	}
	url := p.cfg.Local.AgentCLIURL()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = p.client.Do(req); err == nil {
			resp.Body.Close()
			p.listenerAnswered.Store(p.cfg.Clock.Now().UnixNano())
			return nil
		}
	}
	return []Problem{{Check: "agent_cli_listener", What: fmt.Sprintf("the Agent CLI listener at %s does not answer: %v", url, err),
		Fix: "start the primary with a loopback Agent CLI listener (--agent-cli-listen) and make sure nothing blocks loopback connections"}}
}

// checkAgentBinary: agent_cli_bin/mindroom-agent is a regular, executable file.
func (p *Preflight) checkAgentBinary() []Problem {
	if p.cfg.Local == nil {
		return nil
	}
	path := filepath.Join(p.cfg.Local.BinDir(), AgentBinaryName)
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return []Problem{{Check: "agent_cli_bin", What: fmt.Sprintf("%s is missing: %v", path, err),
			Fix: "restart the primary, which writes agent_cli_bin/" + AgentBinaryName + " again, and check its --agent-binary points at mindroom-agent"}}
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return []Problem{{Check: "agent_cli_bin", What: fmt.Sprintf("%s is not an executable file (mode %v)", path, fi.Mode()),
			Fix: "restart the primary, which rewrites agent_cli_bin/" + AgentBinaryName + " as an executable file"}}
	}
	return nil
}
