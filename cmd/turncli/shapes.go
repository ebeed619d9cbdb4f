package main

import (
	"context"
	"flag"

	"google.golang.org/protobuf/proto"
)

// The two shapes most commands take: a list of records, and one record named by its id.

// runner is what a command's setup returns.
type runner = func(ctx context.Context, c *cli, args []string) error

// online wraps a command's body: it connects first and closes after.
func online(body runner) runner {
	return func(ctx context.Context, c *cli, args []string) error {
		if err := c.connect(); err != nil {
			return err
		}
		defer c.close()
		return body(ctx, c, args)
	}
}

// fetchPage reads one page of a list with the command's filters: its records and the next
// page's token.
type fetchPage[R any] func(ctx context.Context, c *cli, size uint32, token string) ([]R, string, error)

// listCommand is `NOUN ls`: filters registers the list's own flags and returns how to fetch a
// page with them; the records are printed as rows under header, or as JSON lines.
func listCommand[R proto.Message](noun, summary string, header []string, row func(R) []string, filters func(fs *flag.FlagSet) fetchPage[R]) command {
	return shownListCommand(noun, summary, func(c *cli, records []R) error {
		rows := make([][]string, 0, len(records))
		for _, r := range records {
			rows = append(rows, row(r))
		}
		return c.table(header, rows)
	}, filters)
}

// shownListCommand is `NOUN ls` whose records show prints, unless they are printed as JSON
// lines.
func shownListCommand[R proto.Message](noun, summary string, show func(c *cli, records []R) error, filters func(fs *flag.FlagSet) fetchPage[R]) command {
	return command{noun: noun, verb: "ls", summary: summary, setup: func(fs *flag.FlagSet) runner {
		fetch := filters(fs)
		var p page
		p.register(fs)
		return online(func(ctx context.Context, c *cli, _ []string) error {
			records, err := collect(ctx, p, func(ctx context.Context, size uint32, token string) ([]R, string, error) {
				ctx, cancel := c.call(ctx)
				defer cancel()
				return fetch(ctx, c, size, token)
			})
			if err != nil {
				return err
			}
			if c.global.json {
				for _, r := range records {
					if err := c.emit(r); err != nil {
						return err
					}
				}
				return nil
			}
			return show(c, records)
		})
	}}
}

// recordCommand is `NOUN VERB ID`: setup registers the command's own flags and returns what
// it does to the record with that id; the record it returns is printed with show.
func recordCommand[M proto.Message](noun, verb, what, summary string, show func(*cli, M) error, setup func(fs *flag.FlagSet) func(ctx context.Context, c *cli, id uint64) (M, error)) command {
	return command{noun: noun, verb: verb, args: arity{"ID"}, summary: summary, setup: func(fs *flag.FlagSet) runner {
		do := setup(fs)
		return online(func(ctx context.Context, c *cli, args []string) error {
			n, err := parseID(what, args[0])
			if err != nil {
				return err
			}
			ctx, cancel := c.call(ctx)
			defer cancel()
			m, err := do(ctx, c, n)
			if err != nil {
				return err
			}
			return show(c, m)
		})
	}}
}

// noFlags is the setup of a command with no flags of its own.
func noFlags[T any](do T) func(*flag.FlagSet) T { return func(*flag.FlagSet) T { return do } }
