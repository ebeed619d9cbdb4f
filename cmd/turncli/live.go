package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/termtext"
)

// The commands that show what runs now: workers, responses and the event feed.

var workerCommands = []command{
	listCommand("workers", "list the connected workers with their capacity, commands and jobs",
		[]string{"KEY", "WORKER", "CAPACITY", "COMMANDS", "JOBS", "CONNECTED"},
		func(w *operatorv1.ConnectedWorker) []string {
			capacity := "unlimited"
			if w.GetCapacity() > 0 {
				capacity = fmt.Sprint(w.GetCapacity())
			}
			jobs := make([]string, 0, len(w.GetRunningJobIds()))
			for _, j := range w.GetRunningJobIds() {
				jobs = append(jobs, fmt.Sprint(j))
			}
			return []string{w.GetWorkerKey(), w.GetWorkerId(), capacity, fmt.Sprint(w.GetRunningCommands()), strings.Join(jobs, ","), when(w.GetConnectedAt())}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.ConnectedWorker] {
			key := fs.String("key", "", "only the workers of this worker key")
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.ConnectedWorker, string, error) {
				resp, err := c.api.ListWorkers(ctx, &operatorv1.ListWorkersRequest{WorkerKey: *key, PageSize: size, PageToken: token})
				return resp.GetWorkers(), resp.GetNextPageToken(), err
			}
		}),
}

var responseCommands = []command{
	listCommand("responses", "list the live responses (reply turns) with their windows and calls",
		[]string{"ID", "AGENT", "CONVERSATION", "REQUESTER", "SHELL", "WHERE", "WINDOWS", "UNSETTLED", "RECEIPTS", "GRANT EXPIRES"},
		func(r *operatorv1.LiveResponse) []string {
			return []string{r.GetId(), r.GetAgent(), conversationText(r.GetConversation()), r.GetRequester(),
				word(r.GetShellMode()), where(r.GetLocation()), fmt.Sprint(len(r.GetWindows())),
				fmt.Sprint(r.GetUnsettled()), fmt.Sprint(r.GetReceiptCount()), when(r.GetGrantExpiresAt())}
		},
		noFlags(fetchPage[*operatorv1.LiveResponse](func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.LiveResponse, string, error) {
			resp, err := c.api.ListResponses(ctx, &operatorv1.ListResponsesRequest{PageSize: size, PageToken: token})
			return resp.GetResponses(), resp.GetNextPageToken(), err
		}))),
}

var eventCommands = []command{
	{noun: "events", verb: "", summary: "follow the live feed of changes (approvals, prompts, questions, progress, jobs, responses) until interrupted", setup: func(fs *flag.FlagSet) runner {
		fs.Bool("f", true, "follow (always; accepted for habit)")
		return online(func(ctx context.Context, c *cli, _ []string) error {
			stream, err := c.api.WatchEvents(c.follow(ctx), &operatorv1.WatchEventsRequest{})
			if err != nil {
				return err
			}
			// The widest kind the primary publishes (call_approval.finished) and subject (a
			// response's, with its UUID), so the header stays aligned with the feed; a wider
			// one widens its column from its row on.
			feed := liveColumns{w: c.stdout, widths: []int{len(time.TimeOnly), len("call_approval.finished"), len("response/") + 36}}
			header := false
			for {
				msg, err := stream.Recv()
				switch {
				case errors.Is(err, io.EOF), ctx.Err() != nil:
					return nil
				case status.Code(err) == codes.Canceled:
					return nil
				case err != nil:
					return err
				}
				ev := msg.GetEvent()
				if ev == nil {
					continue // the first message: the watch is in place
				}
				if c.global.json {
					if err := c.emit(ev); err != nil {
						return err
					}
					continue
				}
				if !header {
					if err := feed.row("TIME", "KIND", "SUBJECT", "DATA"); err != nil {
						return err
					}
					header = true
				}
				if err := feed.row(ev.GetAt().AsTime().Local().Format(time.TimeOnly), termtext.Inert(ev.GetKind()), termtext.Inert(ev.GetSubject()),
					shorten(termtext.Inert(ev.GetDataJson()), 120)); err != nil {
					return err
				}
			}
		})
	}},
}

var auditCommands = []command{
	listCommand("audit", "list the audit log, newest first",
		[]string{"ID", "AT", "ACTOR", "ACTION", "SUBJECT", "DETAIL"},
		func(e *operatorv1.AuditEntry) []string {
			return []string{fmt.Sprint(e.GetId()), when(e.GetAt()), e.GetActor(), e.GetAction(), e.GetSubject(), e.GetDetailJson()}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.AuditEntry] {
			actor := fs.String("actor", "", "only entries by this actor (an operator, runtime, primary)")
			action := fs.String("action", "", "only entries of this action, e.g. approval.approve")
			subject := fs.String("subject", "", "only entries about this subject, e.g. job/12")
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.AuditEntry, string, error) {
				resp, err := c.api.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Actor: *actor, Action: *action, Subject: *subject, PageSize: size, PageToken: token})
				return resp.GetEntries(), resp.GetNextPageToken(), err
			}
		}),
}

var whoamiCommands = []command{
	{noun: "whoami", verb: "", summary: "show the operator the credential belongs to, and its role", setup: func(fs *flag.FlagSet) runner {
		return online(func(ctx context.Context, c *cli, _ []string) error {
			ctx, cancel := c.call(ctx)
			defer cancel()
			resp, err := c.api.WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
			if err != nil {
				return err
			}
			if c.global.json {
				return c.emit(resp)
			}
			return c.fields("name", resp.GetName(), "role", word(resp.GetRole()))
		})
	}},
}
