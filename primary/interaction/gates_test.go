package interaction_test

import (
	"fmt"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/store"
)

// TestGatesOverEveryOriginModeAndRole: run_in_background starts at once only in an admin
// conversation for a foreground turn of an admin the runtime vouches for (requester_trusted);
// every other turn of an admin there, an admin's name without the flag included, saves a
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
	trust := map[string][]string{"Trusted": {"requester_trusted"}, "Untrusted": nil}
	want := func(mode store.Mode, origin responsev1.Origin, role string, trusted bool) string {
		foreground := origin == responsev1.Origin_ORIGIN_FOREGROUND || origin == responsev1.Origin_ORIGIN_UNSPECIFIED
		switch {
		case mode == store.ModeAuto:
			return approvalWant
		case mode == store.ModeAdmin && role == "Admin" && foreground && trusted:
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
				for tname, flags := range trust {
					n++
					thread := fmt.Sprintf("$gates-%d", n) // one thread each: the per-thread cap never bites
					expect := want(mode, origin, role, flags != nil)
					t.Run(fmt.Sprintf("%s/%s/%s/%s/%s", mode, oname, role, tname, expect), func(t *testing.T) {
						setMode(t, env, thread, mode)
						id := openAs(t, env, requester, thread, func(r *responsev1.OpenResponseRequest) { r.Origin, r.Flags = origin, flags })
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
}
