package catalog

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// flaggedToolkit offers "special" only to responses with the flag "special".
type flaggedToolkit struct{}

func (flaggedToolkit) Name() string        { return "flagged" }
func (flaggedToolkit) Description() string { return "Offers one function only to flagged responses." }
func (flaggedToolkit) Deferred() bool      { return false }
func (flaggedToolkit) Load(context.Context) (Definition, error) {
	return Definition{Functions: []Function{{Name: "plain"}, {Name: "special"}}}, nil
}
func (flaggedToolkit) Call(context.Context, Call) (Result, error) { return Result{}, nil }
func (flaggedToolkit) Offers(function string, id Identity) bool {
	return function != "special" || slices.Contains(id.Flags, "special")
}

func TestAdvertiserHidesFunctionsFromResponsesItDoesNotOfferThemTo(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry()
	if err := r.Register(ctx, flaggedToolkit{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		flags   []string
		offered bool
	}{{"WithoutTheFlag", nil, false}, {"WithTheFlag", []string{"special"}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			v := r.Snapshot(nil).For(Identity{Flags: tc.flags})
			page, err := v.List("", 100)
			if err != nil {
				t.Fatal(err)
			}
			search, err := v.Search("special", "", 10)
			if err != nil {
				t.Fatal(err)
			}
			_, resolveErr := v.Resolve(ctx, "flagged", "special")
			for what, shown := range map[string]bool{
				"listed":   strings.Contains(string(page), `"function":"special"`),
				"searched": strings.Contains(string(search), `"function":"special"`),
				"resolved": resolveErr == nil,
			} {
				if shown != tc.offered {
					t.Errorf("special %s = %v, want %v", what, shown, tc.offered)
				}
			}
			if !strings.Contains(string(page), `"function":"plain"`) {
				t.Errorf("plain is not listed: %s", page)
			}
			if resolveErr != nil {
				_, names, _ := strings.Cut(resolveErr.Error(), "its functions:")
				if strings.Contains(names, "special") || !strings.Contains(names, "plain") {
					t.Errorf("the refusal lists %q, want only the offered functions", names)
				}
			}
		})
	}
}
