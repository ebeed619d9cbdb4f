package main

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/turncli/turncli/internal/benchfloor"
)

// waitsFloorResult is what net/http alone costs for the same parked GETs.
type waitsFloorResult struct {
	perWait goMemory // growth per parked GET
	worst   float64  // ms from the release to the last answer
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
	before := readGoMemory()
	var parked goMemory
	run, err := runWaiters(ctx, b, job, func() { parked = readGoMemory() }, park.Release)
	if err != nil {
		return res, err
	}
	res.perWait = parked.minus(before).per(len(calls))
	_, res.worst, _ = run.afterRelease()
	res.failure = run.failure()
	return res, nil
}
