package sandbox

import (
	"fmt"
	"os"
	"sync"

	"github.com/turncli/turncli/internal/sandbox/mountview"
)

// Support is what this host gives sandboxes.
type Support struct {
	// Namespaces: sandboxes can be made (a probe sandbox was built and ended).
	Namespaces bool
	// Reason says why not, when Namespaces is false.
	Reason string
	// Limits names how limits are enforced: "cgroup v1 (pids, memory, cpu)", say.
	Limits string
}

// Detect builds one empty sandbox to learn whether this host can make them; the answer is kept
// for the life of the process.
var Detect = sync.OnceValue(func() Support {
	if os.Geteuid() != 0 {
		return Support{Reason: "the process is not root: making a sandbox's PID and mount namespaces needs CAP_SYS_ADMIN"}
	}
	s, err := Start(mountview.View{}, Limits{})
	if err != nil {
		return Support{Reason: fmt.Sprintf("a probe sandbox could not be made: %v", err)}
	}
	if err := s.Close(); err != nil {
		return Support{Reason: fmt.Sprintf("a probe sandbox could not be ended: %v", err)}
	}
	return Support{Namespaces: true, Limits: cgroupHost().describe()}
})
