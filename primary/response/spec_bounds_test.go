package response

import (
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/primary/catalog"
	"strings"
	"testing"
)

// TestSpecFieldBounds: each identity field and each flag takes its maximum length and refuses
// one byte more, and refuses NUL and other control characters.
func TestSpecFieldBounds(t *testing.T) {
	m := NewManager(Config{Registry: catalog.NewRegistry()})
	t.Cleanup(m.CloseAll)
	fields := map[string]func(*Spec, string){
		"Requester": func(s *Spec, v string) { s.Requester = v },
		"Channel":   func(s *Spec, v string) { s.Channel = v },
		"Thread":    func(s *Spec, v string) { s.Thread = v },
		"WorkerKey": func(s *Spec, v string) { s.WorkerKey = v },
		"Flag":      func(s *Spec, v string) { s.Flags = []string{v} },
	}
	maxOf := map[string]int{"Flag": MaxFlagLength}
	for name, set := range fields {
		limit := maxOf[name]
		if limit == 0 {
			limit = MaxIdentityLength
		}
		for _, tc := range []struct {
			what string
			v    string
			ok   bool
		}{
			{"MaximumPasses", strings.Repeat("a", limit), true},
			{"OneOverFails", strings.Repeat("a", limit+1), false},
			{"NULFails", "a\x00b", false},
			{"NewlineFails", "a\nb", false},
			{"EscapeFails", "a\x1bb", false},
			{"InvalidUTF8Fails", "a\xffb", false},
		} {
			t.Run(name+tc.what, func(t *testing.T) {
				s := Spec{Agent: "tester"}
				set(&s, tc.v)
				err := s.Validate()
				if tc.ok != (err == nil) || (err != nil && !fault.Is(err, fault.InvalidArgument)) {
					t.Fatalf("Validate: %v, want ok=%v", err, tc.ok)
				}
			})
		}
	}
	t.Run("BashCallIDBounds", func(t *testing.T) {
		r, err := m.Open(Spec{Agent: "tester"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.OpenWindow(strings.Repeat("b", MaxBashCallIDLength)); err != nil {
			t.Errorf("the longest bash_call_id: %v", err)
		}
		for name, id := range map[string]string{"OneOver": strings.Repeat("c", MaxBashCallIDLength+1), "NUL": "a\x00b", "Empty": ""} {
			if _, err := r.OpenWindow(id); !fault.Is(err, fault.InvalidArgument) {
				t.Errorf("%s bash_call_id: %v, want Invalid", name, err)
			}
		}
	})
}
