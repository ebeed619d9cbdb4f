package main

import (
	"bytes"
	"context"
	"fmt"
	"net"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	"github.com/turncli/turncli/internal/benchfloor"
	"github.com/turncli/turncli/sandboxproxy"
)

// measureGRPC counts completed calls per second over AgentCLIService on the primary's gRPC
// listener, reached as a worker's sandbox proxy reaches it: one connection carrying the
// worker's credential and id (sandboxproxy.Identity), every call with the grant of a response
// bound to that worker and the window header. 64 callers share the connection, each with its
// own response, each calling Operate(tools.call test.echo) then GetCall(wait) until completed.
// The floor is the same callers and calls against a gRPC unary echo (benchfloor.GRPCEcho).
func measureGRPC(ctx context.Context, b *bench) ([]row, error) {
	r, err := startRig(ctx, b.cfg, true) // the worker must be connected for its identity to count
	if err != nil {
		return nil, err
	}
	defer r.stop()
	floorAddr, stopFloor, err := serveGRPCFloor()
	if err != nil {
		return nil, err
	}
	defer stopFloor()
	primaryConn, err := dialAsWorker(r.grpcAddr)
	if err != nil {
		return nil, err
	}
	defer primaryConn.Close()
	floorConn, err := dialAsWorker(floorAddr)
	if err != nil {
		return nil, err
	}
	defer floorConn.Close()

	s := b.cfg.scale
	primaryOps := make([]func(context.Context) error, s.loadClients)
	floorOps := make([]func(context.Context) error, s.loadClients)
	for i := range s.loadClients {
		sh, err := r.openShell(ctx, workerKey)
		if err != nil {
			return nil, err
		}
		pc := &grpcCaller{cli: agentcliv1.NewAgentCLIServiceClient(primaryConn), shell: sh}
		used := 0
		primaryOps[i] = func(ctx context.Context) error {
			if used == 1000 { // a response holds at most 1024 receipts: move to a fresh one
				old := pc.shell.responseID
				fresh, err := r.openShell(ctx, workerKey)
				if err != nil {
					return err
				}
				pc.shell = fresh
				if err := r.closeResponse(ctx, old); err != nil {
					return fmt.Errorf("CloseResponse: %w", err)
				}
				used = 0
			}
			used++
			return pc.complete(ctx)
		}
		fc := &grpcCaller{cli: agentcliv1.NewAgentCLIServiceClient(floorConn), shell: shell{token: "floor", window: "floor"}}
		floorOps[i] = fc.complete
	}
	values, floors, cpu, floorCPU, err := loadRounds(ctx, s, primaryOps, floorOps)
	if err != nil {
		return nil, err
	}
	return []row{{
		key: "grpc", measure: fmt.Sprintf("completed calls/s over gRPC (worker path), %d concurrent callers", s.loadClients), unit: perSec,
		value: median(values), floor: median(floors), rounds: values, floors: floors, ratios: ratios(values, floors),
		note: fmt.Sprintf("CPU of this process (servers and clients) per completed call: %.0f µs, %s %.0f µs (%.2f×)",
			median(cpu), "gRPC echo floor", median(floorCPU), median(ratios(cpu, floorCPU))),
		target: target{kind: ratioAtLeast, limit: 0.5, text: "≥ 0.5× gRPC unary echo"},
	}}, nil
}

// dialAsWorker connects to addr as the bench worker's sandbox proxy does.
func dialAsWorker(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(sandboxproxy.Identity{Credential: workerCredential, WorkerID: workerID, Insecure: true}),
	)
}

// serveGRPCFloor serves benchfloor.GRPCEcho on a bare gRPC server on a loopback port.
func serveGRPCFloor() (string, func(), error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := grpc.NewServer()
	agentcliv1.RegisterAgentCLIServiceServer(srv, benchfloor.GRPCEcho{})
	go srv.Serve(lis)
	return lis.Addr().String(), srv.Stop, nil
}

// grpcCaller makes one completed call at a time over AgentCLIService.
type grpcCaller struct {
	cli   agentcliv1.AgentCLIServiceClient
	shell shell
}

func (c *grpcCaller) complete(ctx context.Context) error {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.shell.token, "x-mindroom-agent-cli-window", c.shell.window)
	id := uuid.NewString()
	op := `{"arguments":{},"call_id":"` + id + `","function":"echo","operation":"tools.call","toolkit":"test"}`
	resp, err := c.cli.Operate(ctx, &agentcliv1.OperateRequest{OperationJson: []byte(op)})
	if err != nil {
		return fmt.Errorf("Operate: %w", err)
	}
	receipt := resp.GetCanonicalJson()
	for !isTerminal(receipt) {
		got, err := c.cli.GetCall(ctx, &agentcliv1.GetCallRequest{CallId: id, Wait: "30"})
		if err != nil {
			return fmt.Errorf("GetCall: %w", err)
		}
		receipt = got.GetCanonicalJson()
	}
	if !bytes.Contains(receipt, completed) {
		return fmt.Errorf("call %s did not complete: %s", id, receipt)
	}
	return nil
}
