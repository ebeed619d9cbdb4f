package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/turncli/turncli/internal/cliflag"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

const operatorsUsage = `usage:
  mindroom-primary operators add NAME --role admin|member [--credential-file PATH] [--state-dir DIR]
  mindroom-primary operators list [--state-dir DIR]
  mindroom-primary operators remove NAME [--state-dir DIR]
Every verb takes --store URL (env TURNCLI_STORE_URL) when the primary's store is not SQLite
in its state directory.`

// operatorsCommand manages operators in the primary's store (SQLite in the state directory
// unless --store names another); it works whether or not
// a primary is running on it. `add` prints the new credential once (or writes it to a 0600
// file): only its digest is stored.
func operatorsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, operatorsUsage)
		return 2
	}
	verb := args[0]
	fs := flag.NewFlagSet("mindroom-primary operators "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", cliflag.Env("MINDROOM_STATE_DIR", ".turncli"), "state directory (env MINDROOM_STATE_DIR)")
	storeURL := fs.String("store", os.Getenv("TURNCLI_STORE_URL"), "the primary's store, as its --store (env TURNCLI_STORE_URL)")
	role := fs.String("role", "", "add: admin or member")
	credFile := fs.String("credential-file", "", "add: write the credential to this file (mode 0600) instead of printing it")
	positional, err := cliflag.ParseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "mindroom-primary operators:", err)
		return 2
	}
	want := map[string]int{"add": 1, "list": 0, "remove": 1}
	n, ok := want[verb]
	if !ok || len(positional) != n {
		fmt.Fprintln(stderr, operatorsUsage)
		return 2
	}
	if verb == "add" && !store.OperatorRole(*role).Valid() {
		fmt.Fprintln(stderr, "mindroom-primary operators add: --role must be admin or member")
		return 2
	}

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := primary.OpenStore(ctx, *stateDir, *storeURL, primary.StoreOptions{})
	if err != nil {
		fmt.Fprintln(stderr, "mindroom-primary operators:", err)
		return 1
	}
	defer db.Close()

	switch verb {
	case "add":
		name := positional[0]
		token, err := operators.Add(ctx, db, name, store.OperatorRole(*role))
		if err != nil {
			fmt.Fprintln(stderr, "mindroom-primary operators add:", err)
			return 1
		}
		if *credFile == "" {
			fmt.Fprintln(stdout, token)
			return 0
		}
		if err := operators.WriteCredentialFile(*credFile, token); err != nil {
			// The credential exists nowhere now: take the operator back rather than leave an
			// identity nobody can use.
			_ = db.RemoveOperator(context.WithoutCancel(ctx), name)
			fmt.Fprintln(stderr, "mindroom-primary operators add: credential file:", err)
			return 1
		}
		fmt.Fprintf(stdout, "operator %s (%s) added; credential written to %s\n", name, *role, *credFile)
	case "list":
		ops, err := db.ListOperators(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "mindroom-primary operators list:", err)
			return 1
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tCREATED")
		for _, o := range ops {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", o.Name, o.Role, o.CreatedAt.Format(time.RFC3339))
		}
		_ = tw.Flush()
	case "remove":
		if err := db.RemoveOperator(ctx, positional[0]); err != nil {
			fmt.Fprintln(stderr, "mindroom-primary operators remove:", err)
			return 1
		}
		fmt.Fprintf(stdout, "operator %s removed\n", positional[0])
	}
	return 0
}
