package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/termtext"
)

var jobStatuses = map[string]operatorv1.JobStatus{
	"running": operatorv1.JobStatus_JOB_STATUS_RUNNING, "finished": operatorv1.JobStatus_JOB_STATUS_FINISHED,
}

// logPoll is how often `jobs logs -f` reads on while a job runs.
const logPoll = 250 * time.Millisecond

var jobCommands = []command{
	listCommand("jobs", "list background jobs and agents, newest first",
		[]string{"ID", "STATUS", "KIND", "AGENT", "CONVERSATION", "WHERE", "RUNTIME", "OUTCOME", "LABEL OR COMMAND"},
		func(j *operatorv1.Job) []string {
			return []string{id(j.GetId()), word(j.GetStatus()), word(j.GetKind()),
				j.GetAgent(), conversationText(j.GetConversation()), where(j.GetLocation()), j.GetRuntime().AsDuration().Round(time.Second).String(),
				j.GetOutcome(), jobText(j)}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.Job] {
			status := newChoice(jobStatuses)
			fs.Var(status, "status", "only jobs in this state: "+status.names())
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.Job, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListJobs(ctx, &operatorv1.ListJobsRequest{Status: status.value, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetJobs(), resp.GetNextPageToken(), err
			}
		}),
	recordCommand("jobs", "show", "job id", "show one job with the tail of its log", showJob, noFlags(getJob)),
	{noun: "jobs", verb: "logs", args: arity{"ID"}, summary: "print a job's log; -f follows it until the job ends", setup: func(fs *flag.FlagSet) runner {
		follow := fs.Bool("f", false, "follow: keep printing while the job runs")
		raw := fs.Bool("raw", false, "write the log's bytes unchanged even to a terminal, where its escape sequences act\n(on a terminal they are dropped and other control characters shown as escapes)")
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID("job id", args[0])
			if err != nil {
				return err
			}
			out, end := logOutput(c, *raw)
			var offset uint64
			for {
				// Read whether the job still runs before reading the log, so the last read
				// after it ended sees everything it wrote.
				running := false
				if *follow {
					jctx, cancel := c.call(ctx)
					j, err := getJob(jctx, c, n)
					cancel()
					if err != nil {
						return err
					}
					running = j.GetStatus() == operatorv1.JobStatus_JOB_STATUS_RUNNING
				}
				for {
					rctx, cancel := c.call(ctx)
					body, err := c.api.GetJobLog(rctx, &operatorv1.GetJobLogRequest{JobId: n, Offset: offset})
					cancel()
					if err != nil {
						return err
					}
					if len(body.GetData()) == 0 {
						break
					}
					offset += uint64(len(body.GetData()))
					if _, err := out.Write(body.GetData()); err != nil {
						return err
					}
				}
				if !running {
					return end()
				}
				select {
				case <-ctx.Done():
					return end() // interrupted: the log so far was printed
				case <-time.After(logPoll):
				}
			}
		})
	}},
	recordCommand("jobs", "cancel", "job id", "stop a running job (TERM, then KILL)", showJob,
		noFlags(func(ctx context.Context, c *cli, n uint64) (*operatorv1.Job, error) {
			resp, err := c.api.CancelJob(ctx, &operatorv1.CancelJobRequest{JobId: n})
			return resp.GetJob(), err
		})),
}

// logOutput is where a job's log is written, and what ends it: its bytes unchanged to a file
// or a pipe, so scripts get them exactly; filtered on a terminal (unless raw), so what a job
// printed cannot drive the operator's terminal.
func logOutput(c *cli, raw bool) (io.Writer, func() error) {
	if raw || !isTerminal(c.stdout) {
		return c.stdout, func() error { return nil }
	}
	t := termtext.NewWriter(c.stdout)
	return t, t.Flush
}

func getJob(ctx context.Context, c *cli, n uint64) (*operatorv1.Job, error) {
	resp, err := c.api.GetJob(ctx, &operatorv1.GetJobRequest{JobId: n})
	return resp.GetJob(), err
}

func jobText(j *operatorv1.Job) string {
	if j.GetLabel() != "" {
		return j.GetLabel()
	}
	return j.GetCommand()
}

func where(l *operatorv1.Location) string {
	switch {
	case l.GetWorkerId() != "":
		return l.GetWorkerKey() + "/" + l.GetWorkerId()
	case l.GetWorkerKey() != "":
		return l.GetWorkerKey()
	}
	return "primary"
}

func showJob(c *cli, j *operatorv1.Job) error {
	if c.global.json {
		return c.emit(j)
	}
	exit := ""
	if j.ExitCode != nil {
		exit = fmt.Sprint(j.GetExitCode())
	}
	if err := c.fields("id", id(j.GetId()), "status", word(j.GetStatus()), "kind", word(j.GetKind()),
		"agent", j.GetAgent(), "conversation", conversationText(j.GetConversation()), "requester", j.GetAuthor(), "where", where(j.GetLocation()),
		"label", j.GetLabel(), "command", j.GetCommand(), "created", at(j.GetCreatedAt()), "ended", at(j.GetEndedAt()),
		"runtime", j.GetRuntime().AsDuration().Round(time.Millisecond).String(), "outcome", j.GetOutcome(), "exit code", exit); err != nil {
		return err
	}
	if j.GetTail() != "" {
		// Lines and tabs kept, escape sequences dropped: the tail reads as the log does.
		fmt.Fprintln(c.stdout, "tail:")
		for _, line := range strings.Split(strings.TrimSuffix(termtext.Text(j.GetTail()), "\n"), "\n") {
			fmt.Fprintf(c.stdout, "  %s\n", line)
		}
	}
	return nil
}
