package main

import (
	"context"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary"
)

// liveHeap is the heap in use after two full collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// measureIdleHeap is the live heap each idle open response adds to the primary: open 10,000
// primary-local responses through the runtime API (no window, no call), keeping nothing of them
// on the client side, and divide the growth of the live heap by their number. The median of
// memRounds rounds, each in a fresh primary.
func measureIdleHeap(ctx context.Context, b *bench) ([]row, error) {
	s := b.cfg.scale
	var values []float64
	for round := 0; round < s.memRounds; round++ {
		v, err := idleHeapRound(ctx, b, s.idleResponses)
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
	return []row{{
		key: "idle", measure: fmt.Sprintf("heap per idle open response (%d open)", s.idleResponses), unit: byteCount,
		value: median(values), rounds: values,
		target: target{kind: valueAtMost, limit: 4096, text: "≤ 4 KiB"},
	}}, nil
}

func idleHeapRound(ctx context.Context, b *bench, n int) (float64, error) {
	// One runtime credential opens them all, past the bounds a primary keeps by default.
	r, err := startRig(ctx, b.cfg, false, func(c *primary.Config) {
		c.Responses.MaxOpen, c.Responses.MaxOpenPerCredential = n+100, n+100
	})
	if err != nil {
		return 0, err
	}
	defer r.stop()
	open := func(count int) error {
		for range count {
			if _, err := r.runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{
				AgentName: "bench", RequesterId: "@bench:example.org",
				Conversation: &conversationv1.Conversation{Channel: "!bench:example.org", Thread: "$bench"},
				ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL,
			}); err != nil {
				return fmt.Errorf("OpenResponse: %w", err)
			}
		}
		return nil
	}
	if err := open(100); err != nil { // warm the connection and the servers' pools, uncounted
		return 0, err
	}
	before := liveHeap()
	if err := open(n); err != nil {
		return 0, err
	}
	after := liveHeap()
	b.heapProfile("idle")
	return (float64(after) - float64(before)) / float64(n), nil
}

// measureReceiptHeap is the live heap each retained receipt adds: receiptResps primary-local
// responses, one client each (concurrently), each making receiptsPer-1 completed test.echo
// calls over REST after a first uncounted one; the growth of the live heap once every call is
// completed, divided by the number of receipts. The responses stay open, so their receipts stay.
func measureReceiptHeap(ctx context.Context, b *bench) ([]row, error) {
	s := b.cfg.scale
	var values []float64
	for round := 0; round < s.memRounds; round++ {
		v, err := receiptHeapRound(ctx, b, s.receiptResps, s.receiptsPer)
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
	return []row{{
		key: "receipt", measure: fmt.Sprintf("heap per retained receipt (%d receipts)", s.receiptResps*(s.receiptsPer-1)), unit: byteCount,
		value: median(values), rounds: values,
		target: target{kind: valueAtMost, limit: 1024, text: "≤ 1 KiB"},
	}}, nil
}

func receiptHeapRound(ctx context.Context, b *bench, responses, per int) (float64, error) {
	r, err := startRig(ctx, b.cfg, false)
	if err != nil {
		return 0, err
	}
	defer r.stop()
	clients := make([]*restClient, responses)
	for i := range clients {
		sh, err := r.openShell(ctx, "")
		if err != nil {
			return 0, err
		}
		clients[i] = newRESTClient(sh)
		defer clients[i].close()
		if err := clients[i].complete(ctx, "test", "echo", "{}"); err != nil { // opens the connection, uncounted
			return 0, err
		}
	}
	before := liveHeap()
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range clients {
		g.Go(func() error {
			for range per - 1 {
				if err := c.complete(gctx, "test", "echo", "{}"); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	after := liveHeap()
	b.heapProfile("receipt")
	return (float64(after) - float64(before)) / float64(responses*(per-1)), nil
}
