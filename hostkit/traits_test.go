package hostkit_test

import (
	"fmt"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/hostkit"
	"github.com/turncli/turncli/internal/testenv"
)

func TestDeclaredTraitsHideAFunctionFromStandardResponses(t *testing.T) {
	env := testenv.Start(t)
	runHost(t, env, nil, hostkit.Toolkit{Name: "traits_tk", Functions: []hostkit.Function{
		hostkit.Func("add", "Adds.", add),
		hostkit.Func("later", "Adds after the command ends.", add).WithTraits(hostkit.Traits{ExternalExecution: true, EndsTurn: true}),
	}}).waitRegistered()
	for _, tc := range []struct {
		mode responsev1.ShellMode
		want string
	}{
		{responsev1.ShellMode_SHELL_MODE_STANDARD, "[add]"},
		{responsev1.ShellMode_SHELL_MODE_MINIMAL, "[add later]"},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			sh := openShell(t, env, env.Open(t, func(r *responsev1.OpenResponseRequest) { r.ShellMode = tc.mode }))
			code, page := sh.cli("tools", "search", "adds", "--toolkit", "traits_tk")
			items, _ := page["items"].([]any)
			var names []string
			for _, it := range items {
				names = append(names, fmt.Sprint(it.(map[string]any)["function"]))
			}
			if code != 0 || fmt.Sprint(names) != tc.want {
				t.Fatalf("search = %d %v; want functions %s", code, page, tc.want)
			}
		})
	}
}
