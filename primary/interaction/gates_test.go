package interaction_test

import (
	"fmt"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/store"
)

// TestGatesOverEveryOriginModeAndRole: run_in_background starts at once only in an admin
// conversation for a foreground turn of an admin; every other turn of an admin there saves a
// durable approval, as every turn in an auto conversation does; ask refuses everyone, and an
// admin conversation refuses anyone not an admin.
func TestGatesOverEveryOriginModeAndRole(t *testing.T) {
	env := start(t)
	addAuthors(t, env)
	origins := map[string]responsev1.Origin{
		"Foreground": responsev1.Origin_ORIGIN_FOREGROUND, "Background": responsev1.Origin_ORIGIN_BACKGROUND,
		"Scheduled": responsev1.Origin_ORIGIN_SCHEDULED, "Recovery": responsev1.Origin_ORIGIN_RECOVERY,
		"API": responsev1.Origin_ORIGIN_API, "Unspecified": responsev1.Origin_ORIGIN_UNSPECIFIED,
	}
	requesters := map[string]string{"Admin": adminAuthor, "Member": memberAuthor, "NotAnOperator": "@stranger:example.org"}
	const (
		refusedWant  = "refused"
		approvalWant = "approval"
		directWant   = "started"
	)
	want := func(mode store.Mode, origin responsev1.Origin, role string) string {
		foreground := origin == responsev1.Origin_ORIGIN_FOREGROUND || origin == responsev1.Origin_ORIGIN_UNSPECIFIED
		switch {
		case mode == store.ModeAuto:
			return approvalWant
		case mode == store.ModeAdmin && role == "Admin" && foreground:
			return directWant
		case mode == store.ModeAdmin && role == "Admin":
			return approvalWant
		}
		return refusedWant
	}
	n := 0
	for _, mode := range []store.Mode{store.ModeAsk, store.ModeAuto, store.ModeAdmin} {
		for oname, origin := range origins {
			for role, requester := range requesters {
				n++
				thread := fmt.Sprintf("$gates-%d", n) // one thread each: the per-thread cap never bites
				expect := want(mode, origin, role)
				t.Run(fmt.Sprintf("%s/%s/%s/%s", mode, oname, role, expect), func(t *testing.T) {
					setMode(t, env, thread, mode)
					id := openAs(t, env, requester, thread, func(r *responsev1.OpenResponseRequest) { r.Origin = origin })
					r := callTool(t, env, id, "interaction.run_in_background", jsonArgs(t, map[string]string{"command": "true"}))
					switch expect {
					case refusedWant:
						refused(t, r, "mode")
					case approvalWant:
						pendingApproval(t, r)
					case directWant:
						startedJob(t, r)
					}
				})
			}
		}
	}
}
