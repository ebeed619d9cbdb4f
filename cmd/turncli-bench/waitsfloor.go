package main

import (
	"context"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/turncli/turncli/internal/benchfloor"
)

// waitsFloorResult is what net/http alone costs for the same parked GETs.
type waitsFloorResult struct {
	perWait goMemory // growth per parked GET
	worst   float64  // ms from the release to the last answer
	cpu     float64  // µs of this process's CPU per wait from the release to the last answer
	failure string
}

// waitsFloor sends the same GETs (calls, byte for byte) from the same child to a bare net/http
// server in this process whose handler parks each of them at once on one shared channel
// (benchfloor.Parking), reads the memory they added once parked, as waitsRound does, then
// releases them all.
func waitsFloor(ctx context.Context, b *bench, calls []waitCall, nofile uint64) (waitsFloorResult, error) {
	var res waitsFloorResult
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	park := benchfloor.NewParking()
	srv := &http.Server{Handler: park, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(lis)
	defer srv.Close()
	job := waitersJob{Origin: "http://" + lis.Addr().String(), Wait: "30", Parallel: 128, NoFile: nofile, Calls: calls}
	// As waitsRound does: the connections' buffers then come from memory the OS hands out anew,
	// whose pages are first touched when the answer is written, in both runs.
	debug.FreeOSMemory()
	before := readGoMemory()
	var parked goMemory
	run, err := runWaiters(ctx, b, job, func() { parked = readGoMemory() }, park.Release)
	if err != nil {
		return res, err
	}
	res.perWait = parked.minus(before).per(len(calls))
	_, res.worst, _ = run.afterRelease()
	res.cpu = float64(run.cpu) / float64(time.Microsecond) / float64(len(calls))
	res.failure = run.failure()
	return res, nil
}
