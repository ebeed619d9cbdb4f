package testenv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"time"
)

// Open opens a primary-local response for agent "tester" (changes applied by edit) and closes it
// at cleanup.
func (e *Env) Open(t testing.TB, edit ...func(*responsev1.OpenResponseRequest)) string {
	t.Helper()
	req := &responsev1.OpenResponseRequest{
		AgentName: "tester", RequesterId: "@alice:example.org",
		Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$thread"},
		ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL,
	}
	for _, f := range edit {
		f(req)
	}
	resp, err := e.Runtime.OpenResponse(context.Background(), req)
	if err != nil {
		t.Fatalf("OpenResponse: %v", err)
	}
	t.Cleanup(func() {
		_, _ = e.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	})
	return resp.GetResponseId()
}

// BashRun is a finished RunBash.
type BashRun struct {
	Stdout, Stderr string
	Result         *responsev1.BashResult
}

// RunBash runs command in response id through ResponseService and collects everything.
func (e *Env) RunBash(t testing.TB, responseID, bashCallID, command string) BashRun {
	t.Helper()
	return e.RunBashContext(context.Background(), t, responseID, bashCallID, command, 0)
}

// RunBashContext is RunBash with a context and a timeout.
func (e *Env) RunBashContext(ctx context.Context, t testing.TB, responseID, bashCallID, command string, timeout time.Duration) BashRun {
	t.Helper()
	req := &responsev1.RunBashRequest{ResponseId: responseID, BashCallId: bashCallID, Command: command}
	if timeout > 0 {
		req.Timeout = durationpb.New(timeout)
	}
	stream, err := e.Runtime.RunBash(ctx, req)
	if err != nil {
		t.Fatalf("RunBash: %v", err)
	}
	var out, errOut bytes.Buffer
	var run BashRun
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("RunBash stream: %v", err)
		}
		switch ev := msg.GetEvent().(type) {
		case *responsev1.RunBashResponse_Output:
			if ev.Output.GetStream() == responsev1.OutputStream_OUTPUT_STREAM_STDERR {
				errOut.Write(ev.Output.GetData())
			} else {
				out.Write(ev.Output.GetData())
			}
		case *responsev1.RunBashResponse_Result:
			run.Result = ev.Result
		}
	}
	if run.Result == nil {
		t.Fatalf("RunBash ended without a result")
	}
	run.Stdout, run.Stderr = out.String(), errOut.String()
	return run
}
