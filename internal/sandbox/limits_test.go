package sandbox_test

import (
	"testing"

	"github.com/turncli/turncli/internal/sandbox"
)

func TestLimitsFillOnlyTheirZeroFields(t *testing.T) {
	got := sandbox.Limits{Processes: 9, TmpBytes: 1 << 20}.OrDefaults()
	want := sandbox.DefaultLimits
	want.Processes, want.TmpBytes = 9, 1<<20
	if got != want {
		t.Fatalf("OrDefaults = %+v, want %+v", got, want)
	}
}

func TestLimitsAreCheckedAtTheirEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		l    sandbox.Limits
		ok   bool
	}{
		{"EightProcesses", sandbox.Limits{Processes: 8}, true},
		{"SevenProcesses", sandbox.Limits{Processes: 7}, false},
		{"SixteenMiB", sandbox.Limits{MemoryBytes: 16 << 20}, true},
		{"ByteUnderSixteenMiB", sandbox.Limits{MemoryBytes: 16<<20 - 1}, false},
		{"Weight10000", sandbox.Limits{CPUWeight: 10000}, true},
		{"Weight10001", sandbox.Limits{CPUWeight: 10001}, false},
		{"NegativeFileSize", sandbox.Limits{FileBytes: -1}, false},
		{"NoLimits", sandbox.Limits{}, true},
	} {
		if err := c.l.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate = %v", c.name, err)
		}
	}
}
