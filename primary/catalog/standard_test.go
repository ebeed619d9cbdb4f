package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// tracedToolkit has one function per trait and one without any.
type tracedToolkit struct{ deferred bool }

func (tracedToolkit) Name() string                               { return "traced" }
func (tracedToolkit) Description() string                        { return "Functions with and without traits." }
func (t tracedToolkit) Deferred() bool                           { return t.deferred }
func (tracedToolkit) Call(context.Context, Call) (Result, error) { return Result{}, nil }
func (tracedToolkit) Load(context.Context) (Definition, error) {
	return Definition{Functions: []Function{
		{Name: "plain", Description: "finishes in the command"},
		{Name: "confirmed", Description: "waits", Traits: Traits{NeedsConfirmation: true}},
		{Name: "asks", Description: "waits", Traits: Traits{UserInput: true}},
		{Name: "detaches", Description: "outlives", Traits: Traits{ExternalExecution: true}},
		{Name: "ends", Description: "ends the turn", Traits: Traits{EndsTurn: true}},
	}}, nil
}

var tracedFunctions = []string{"plain", "confirmed", "asks", "detaches", "ends"}

func TestStandardViewOffersOnlyFunctionsWithoutTraits(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry()
	if err := r.Register(ctx, tracedToolkit{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		view *View
		want []string
	}{
		{"MinimalOffersEveryFunction", r.Snapshot(nil).For(Identity{}), tracedFunctions},
		{"StandardOffersOnlyThePlainOne", r.Snapshot(nil).For(Identity{}).Standard(), []string{"plain"}},
		{"StandardSurvivesWithout", r.Snapshot(nil).Standard().Without("other"), []string{"plain"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := tc.view.List("", 100)
			if err != nil {
				t.Fatal(err)
			}
			search, err := tc.view.Search("traced", "", 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tracedFunctions {
				want := contains(tc.want, f)
				res, resolveErr := tc.view.Resolve(ctx, "traced", f)
				for what, shown := range map[string]bool{
					"listed":   strings.Contains(string(page), `"function":"`+f+`"`),
					"searched": strings.Contains(string(search), `"function":"`+f+`"`),
					"resolved": resolveErr == nil,
				} {
					if shown != want {
						t.Errorf("%s %s = %v, want %v", f, what, shown, want)
					}
				}
				if resolveErr == nil && res.Traits().Any() != (f != "plain") {
					t.Errorf("%s resolved with traits %+v", f, res.Traits())
				}
			}
		})
	}
}

// advertisedTraced is tracedToolkit offering "asks" to no one.
type advertisedTraced struct{ tracedToolkit }

func (advertisedTraced) Offers(function string, _ Identity) bool { return function != "asks" }

// TestStandardViewSaysWhatOnlyTheModeHides: a function with a trait that the response would be
// offered is refused as hidden by the standard mode, so the caller can say how to reach it; one
// its toolkit does not offer to the response, or that does not exist, stays unknown.
func TestStandardViewSaysWhatOnlyTheModeHides(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry()
	if err := r.Register(ctx, advertisedTraced{}); err != nil {
		t.Fatal(err)
	}
	v := r.Snapshot(nil).For(Identity{}).Standard()
	for _, tc := range []struct {
		function string
		hidden   bool
	}{{"detaches", true}, {"confirmed", true}, {"ends", true}, {"asks", false}, {"missing", false}} {
		_, err := v.Resolve(ctx, "traced", tc.function)
		if got := errors.Is(err, ErrHiddenInStandard); got != tc.hidden {
			t.Errorf("%s: hidden by the standard mode = %v (%v), want %v", tc.function, got, err, tc.hidden)
		}
		if !tc.hidden && (err == nil || !strings.Contains(err.Error(), "its functions: plain")) {
			t.Errorf("%s: %v, want unknown, naming only plain", tc.function, err)
		}
	}
	if _, err := r.Snapshot(nil).For(Identity{}).Resolve(ctx, "traced", "detaches"); err != nil {
		t.Errorf("the minimal view refuses detaches: %v", err)
	}
}

func TestStandardViewListsAnUnloadedDeferredToolkitAsOneItemThenFiltersIt(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry()
	if err := r.Register(ctx, tracedToolkit{deferred: true}); err != nil {
		t.Fatal(err)
	}
	v := r.Snapshot(nil).Standard()
	page, err := v.List("", 100)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `"deferred":true`) || strings.Contains(string(page), `"function"`) {
		t.Fatalf("before loading, the page is %s; want the one deferred item", page)
	}
	if _, err := v.Resolve(ctx, "traced", "detaches"); !errors.Is(err, ErrHiddenInStandard) {
		t.Fatalf("resolving a function with a trait = %v; want it hidden by the standard mode", err)
	}
	page, err = v.List("", 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(page), `"function"`); got != 1 || !strings.Contains(string(page), `"function":"plain"`) {
		t.Fatalf("after loading, the page is %s; want only plain", page)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
