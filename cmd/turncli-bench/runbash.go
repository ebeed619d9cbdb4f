package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
)

// runBash runs req through runtime until its stream ends, handing each output chunk to
// onOutput (nil: dropped), and returns the command's result: nil when the stream ended
// without one. The error is the stream's.
func runBash(ctx context.Context, runtime responsev1.ResponseServiceClient, req *responsev1.RunBashRequest, onOutput func(*responsev1.OutputChunk)) (*responsev1.BashResult, error) {
	stream, err := runtime.RunBash(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("RunBash: %w", err)
	}
	var result *responsev1.BashResult
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return result, nil
		}
		if err != nil {
			return nil, fmt.Errorf("RunBash: %w", err)
		}
		if c := msg.GetOutput(); c != nil && onOutput != nil {
			onOutput(c)
		}
		if res := msg.GetResult(); res != nil {
			result = res
		}
	}
}

// succeeded reports whether a command ran and exited 0.
func succeeded(res *responsev1.BashResult) bool {
	return res != nil && res.GetExitCode() == 0 && res.GetError() == ""
}

// outcome says in a line how a command that did not succeed ended: its exit code, whether it
// timed out, its error and how many tool calls it had made (the receipts themselves are left
// out: a load shell's would fill a screen).
func outcome(res *responsev1.BashResult) string {
	if res == nil {
		return "no result"
	}
	s := fmt.Sprintf("exit %d", res.GetExitCode())
	if res.GetTimedOut() {
		s += ", timed out"
	}
	if e := res.GetError(); e != "" {
		s += ", error " + strconv.Quote(e)
	}
	return s + fmt.Sprintf(", %d tool calls made", len(res.GetReceipts()))
}

// lastLines is the last n lines of out, for an error that shows where a command got to.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
