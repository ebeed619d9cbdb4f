package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// bigToolkit is an eager toolkit with one function whose description is huge.
type bigToolkit struct{ description string }

func (bigToolkit) Name() string        { return "big" }
func (bigToolkit) Description() string { return "A toolkit with a long-winded function." }
func (bigToolkit) Deferred() bool      { return false }
func (b bigToolkit) Load(context.Context) (Definition, error) {
	return Definition{Functions: []Function{{Name: "verbose", Description: b.description}}}, nil
}
func (bigToolkit) Call(context.Context, Call) (Result, error) { return Result{}, nil }

func TestItemWithAnOversizeDescriptionStillFitsAPage(t *testing.T) {
	for _, tc := range []struct {
		name string
		desc string
	}{
		{"LongASCII", strings.Repeat("d", 70_000)},
		{"LongEscapeHeavy", strings.Repeat("\x01", 20_000)}, // 6 bytes each once encoded
		{"LongMultiByte", strings.Repeat("é", 40_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			if err := r.Register(context.Background(), bigToolkit{description: tc.desc}); err != nil {
				t.Fatal(err)
			}
			v := r.Snapshot(nil)
			page, err := v.List("", 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > MaxPageBytes {
				t.Fatalf("page of %d bytes", len(page))
			}
			var got struct {
				Items []struct{ Description string } `json:"items"`
			}
			if err := json.Unmarshal(page, &got); err != nil || len(got.Items) != 1 {
				t.Fatalf("page %q: %v", page[:200], err)
			}
			if !strings.HasSuffix(got.Items[0].Description, "(shortened; tools describe shows all of it)") {
				t.Errorf("the shortened description does not say so")
			}
			fn, err := v.Resolve(context.Background(), "big", "verbose")
			if err != nil {
				t.Fatal(err)
			}
			var desc struct{ Description string }
			if err := json.Unmarshal(fn.Descriptor(), &desc); err != nil || desc.Description != tc.desc {
				t.Errorf("describe does not return the full description")
			}
		})
	}
	t.Run("DescriptionWithinTheBudgetIsKept", func(t *testing.T) {
		d := strings.Repeat("k", 1000)
		if got := listDescription(d); got != d {
			t.Errorf("a short description was changed")
		}
	})
}

func TestADeferredItemNamesTheCommandThatLoadsIt(t *testing.T) {
	for _, tc := range []struct{ name, toolkit, command string }{
		{"PlainName", "files", "mindroom-agent tools describe files"},
		{"NameThatNeedsQuoting", "it's mine", `mindroom-agent tools describe 'it'\''s mine'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := deferredDescription(tc.toolkit, "Files on disk.")
			if want := "Files on disk. (not loaded yet: `" + tc.command + "` loads it and names its functions)"; got != want {
				t.Fatalf("description %q, want %q", got, want)
			}
		})
	}
	t.Run("AnOversizeDescriptionIsShortenedAndKeepsTheCommand", func(t *testing.T) {
		got := deferredDescription("big", strings.Repeat("d", 70_000))
		encoded, _ := json.Marshal(got)
		if len(encoded) > MaxListDescriptionBytes || !strings.Contains(got, "(shortened; tools describe shows all of it)") ||
			!strings.HasSuffix(got, "`mindroom-agent tools describe big` loads it and names its functions)") {
			t.Fatalf("%d bytes, ends %q", len(encoded), got[len(got)-160:])
		}
	})
}
