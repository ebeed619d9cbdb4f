package main

import (
	"context"
	"errors"
	"fmt"
	"io"

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
