package primary

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// EndpointsFile is the name of the file, in the state dir, that says where a running primary
// serves.
const EndpointsFile = "endpoints.json"

// Run listens on the configured addresses, writes endpoints.json once serving, and serves until
// ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	var lis Listeners
	var opened []net.Listener
	closeAll := func() {
		for _, l := range opened {
			l.Close()
		}
	}
	for _, spec := range []struct {
		addr string
		dst  *net.Listener
	}{{cfg.GRPCListen, &lis.GRPC}, {cfg.HTTPListen, &lis.HTTP}, {cfg.AgentCLIListen, &lis.AgentCLI}} {
		l, err := net.Listen("tcp", spec.addr)
		if err != nil {
			closeAll()
			return fmt.Errorf("listen %s: %w", spec.addr, err)
		}
		opened = append(opened, l)
		*spec.dst = l
	}
	p, err := New(ctx, cfg, lis)
	if err != nil {
		closeAll()
		return err
	}
	data, err := json.MarshalIndent(p.Endpoints(), "", "  ")
	if err != nil {
		closeAll()
		return err
	}
	path := filepath.Join(p.cfg.StateDir, EndpointsFile)
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		closeAll()
		return fmt.Errorf("endpoints: %w", err)
	}
	defer os.Remove(path)
	return p.Serve(ctx)
}
