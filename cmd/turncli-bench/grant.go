package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/primary/response"
)

// measureGrant times grant resolution (response.Manager.Authenticate, what every Agent CLI
// request does first) in a primary holding 100,000 live responses, against its floor: a bare
// map[[32]byte]*int of the same digests, looked up in the same order in the same run — no
// primary code, only the hash index, so the ratio is what resolution adds to what the memory
// hierarchy alone costs at that size. Each round resolves the same number of grants,
// single-threaded, in a fixed pseudo-random order over all live grants; the value is CPU
// nanoseconds per resolution. Grants are resolved in batches of 256 whose token strings are
// read just before the batch (untimed), as a request's token is cache-hot when it is resolved;
// the index and the responses are touched as a real request finds them, cold or not.
//
// A second row resolves, in the same primary, only the grants of as many active responses as
// a primary with 10 live responses holds, against that small primary: nothing in resolution may
// grow with the number of live responses.
func measureGrant(ctx context.Context, b *bench) ([]row, error) {
	s := b.cfg.scale
	small, err := startRig(ctx, b.cfg, false)
	if err != nil {
		return nil, err
	}
	defer small.stop()
	large, err := startRig(ctx, b.cfg, false)
	if err != nil {
		return nil, err
	}
	defer large.stop()
	smallTokens, err := openLive(small, s.grantSmall)
	if err != nil {
		return nil, err
	}
	b.progress("grant: opening %d responses", s.grantLive)
	largeTokens, err := openLive(large, s.grantLive)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, s.grantOps)
	for i := range order {
		order[i] = rng.IntN(1 << 30)
	}
	manager := func(m *response.Manager) func(string) bool {
		return func(token string) bool { _, ok := m.Authenticate(token, response.LocalPath); return ok }
	}
	bareMap := func(tokens []string) func(string) bool {
		m := make(map[[32]byte]*int, len(tokens))
		for _, t := range tokens {
			m[sha256.Sum256([]byte(t))] = new(int)
		}
		return func(token string) bool {
			var buf [64]byte // hashed without allocating, as grant.Registry.Resolve does
			return m[sha256.Sum256(buf[:copy(buf[:], token)])] != nil
		}
	}
	resolveLarge := timedResolution(order, largeTokens, manager(large.p.Internals().Responses))
	resolveSmall := timedResolution(order, smallTokens, manager(small.p.Internals().Responses))
	mapLarge, mapSmall := timedResolution(order, largeTokens, bareMap(largeTokens)), timedResolution(order, smallTokens, bareMap(smallTokens))
	for _, f := range []func() (float64, error){resolveLarge, resolveSmall, mapLarge, mapSmall} { // warm up, uncounted
		if _, err := f(); err != nil {
			return nil, err
		}
	}
	values, floors, err := alternate(s.rounds, resolveLarge, mapLarge)
	if err != nil {
		return nil, err
	}
	active := make([]string, len(smallTokens)) // as many active responses among the many as live in the few
	for i := range active {
		active[i] = largeTokens[rng.IntN(len(largeTokens))]
	}
	activeValues, activeFloors, err := alternate(s.rounds, timedResolution(order, active, manager(large.p.Internals().Responses)), resolveSmall)
	if err != nil {
		return nil, err
	}
	smallMaps, smallResolved, err := alternate(s.rounds, mapSmall, resolveSmall)
	if err != nil {
		return nil, err
	}
	return []row{{
		key: "grant", measure: fmt.Sprintf("grant resolution, %d live responses, requests spread over all (floor: a bare Go map of the same digests)", s.grantLive), unit: nanos,
		value: median(values), floor: median(floors), rounds: values, floors: floors, ratios: ratios(values, floors),
		target: target{kind: ratioAtMost, limit: 1.5, text: "≤ 1.5×"},
		note: fmt.Sprintf("CPU time per resolution, uniformly random over all live grants; with %d live: %.0f ns resolved, %.0f ns in a bare map (the memory hierarchy's share at %d is %.2f× the small map's)",
			s.grantSmall, median(smallResolved), median(smallMaps), s.grantLive, median(floors)/median(smallMaps)),
	}, {
		key: "grant-active", measure: fmt.Sprintf("the same, requests from %d active responses among the %d (floor: a primary with %d live)", len(active), s.grantLive, s.grantSmall), unit: nanos,
		value: median(activeValues), floor: median(activeFloors), rounds: activeValues, floors: activeFloors, ratios: ratios(activeValues, activeFloors),
		target: target{kind: ratioAtMost, limit: 1.2, text: "≤ 1.2×"},
	}}, nil
}

// timedResolution returns one round of resolve over tokens in order (indices modulo the number
// of tokens), in batches whose tokens are read untimed first; it reports ns per resolution. It
// counts this thread's CPU time, not wall time, so time the scheduler gives to other processes
// of a shared machine does not count; the goroutine keeps its thread meanwhile.
func timedResolution(order []int, tokens []string, resolve func(string) bool) func() (float64, error) {
	const batch = 256
	var hot [batch]string
	return func() (float64, error) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var elapsed time.Duration
		var touched byte
		for start := 0; start < len(order); start += batch {
			n := min(batch, len(order)-start)
			for j := range n {
				t := tokens[order[start+j]%len(tokens)]
				touched ^= t[0] ^ t[len(t)-1]
				hot[j] = t
			}
			t0, err := threadCPU()
			if err != nil {
				return 0, err
			}
			for _, t := range hot[:n] {
				if !resolve(t) {
					return 0, errors.New("a live grant did not resolve")
				}
			}
			t1, err := threadCPU()
			if err != nil {
				return 0, err
			}
			elapsed += t1 - t0
		}
		tokenSink = touched
		return float64(elapsed.Nanoseconds()) / float64(len(order)), nil
	}
}

// tokenSink keeps the untimed reads of the tokens from being optimised away.
var tokenSink byte

// threadCPU is the CPU time of the calling thread.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// openLive opens n primary-local responses in-process, each with one window (to learn its
// grant, which only a shell's environment carries), and returns their grants.
func openLive(r *rig, n int) ([]string, error) {
	tokens := make([]string, n)
	for i := range tokens {
		resp, err := r.p.Internals().Responses.Open(response.Spec{Agent: "bench", Requester: "@bench:example.org",
			Channel: "!bench:example.org", Thread: "$bench", ShellMode: "minimal"})
		if err != nil {
			return nil, err
		}
		w, err := resp.OpenWindow("bench")
		if err != nil {
			return nil, err
		}
		env, err := resp.AgentCLIEnv(w)
		if err != nil {
			return nil, err
		}
		tokens[i] = env["MINDROOM_AGENT_CLI_TOKEN"]
	}
	return tokens, nil
}
