package testtk

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/catalog"
)

func TestFunctions(t *testing.T) {
	tests := []struct {
		name     string
		function string
		args     string
		want     string // canonical JSON of the result value
		wantErr  string
	}{
		{"EchoReturnsArgumentsUnchanged", "echo", `{"b":[1,1.0,"x"],"a":{"requester_id":"spoof"}}`, `{"a":{"requester_id":"spoof"},"b":[1,1.0,"x"]}`, ""},
		{"EchoOfNoArgumentsIsEmptyObject", "echo", `{}`, `{}`, ""},
		{"SleepZeroReportsSecondsAsGiven", "sleep", `{"seconds":0}`, `{"slept":0}`, ""},
		{"SleepKeepsFractionalSeconds", "sleep", `{"seconds":0.001}`, `{"slept":0.001}`, ""},
		{"FailWithoutMessageFailsWithDefault", "fail", `{}`, ``, "test failure"},
		{"FailWithMessageFailsWithIt", "fail", `{"message":"boom"}`, ``, "boom"},
		{"LargeZeroIsEmptyString", "large", `{"bytes":0}`, `""`, ""},
		{"LargeReturnsThatManyX", "large", `{"bytes":5}`, `"xxxxx"`, ""},
		{"WaitZeroReportsSecondsAsGiven", "wait", `{"seconds":0}`, `{"waited":0}`, ""},
		{"MediaReturnsOK", "media", `{}`, `{"ok":true}`, ""},
		{"HugeSchemaReturnsOK", "huge_schema", `{"option_001":"a"}`, `{"ok":true}`, ""},
		{"IdentityComesFromTheCallNotArguments", "identity", `{}`,
			`{"agent":"agent-a","bash_call_id":"bash-1","channel":"chan-c","requester":"user-r","response_id":"resp-1","thread":"thread-t"}`, ""},
		{"ConfirmEchoWithoutMarkerReturnsArgumentsUnchanged", "confirm_echo", `{"x":1}`, `{"x":1}`, ""},
		{"UnknownFunctionFails", "nope", `{}`, ``, "unknown function test.nope"},
	}
	tk := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tk.Call(t.Context(), newCall(t, Name, tc.function, tc.args))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if got := canonical(t, res.Value); got != tc.want {
				t.Fatalf("value = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLargeReturnsExactlyTheRequestedBytes(t *testing.T) {
	for _, n := range []int{16 << 10, 16<<10 + 1, 1 << 20} {
		res, err := New().Call(t.Context(), newCall(t, Name, "large", `{"bytes":`+strconv.Itoa(n)+`}`))
		if err != nil {
			t.Fatalf("large %d: %v", n, err)
		}
		s, _ := res.Value.(string)
		if len(s) != n || strings.Trim(s, "x") != "" {
			t.Fatalf("large %d returned %d bytes (only x: %v)", n, len(s), strings.Trim(s, "x") == "")
		}
	}
}

func TestMediaAttachesAValidPNG(t *testing.T) {
	res, err := New().Call(t.Context(), newCall(t, Name, "media", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attachments) != 1 {
		t.Fatalf("attachments = %d, want 1", len(res.Attachments))
	}
	a := res.Attachments[0]
	if a.Kind != "image" || a.MimeType != "image/png" || a.Name != "pixel.png" {
		t.Fatalf("attachment = %+v", a)
	}
	const prefix = "data:image/png;base64,"
	data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a.URI, prefix))
	if !strings.HasPrefix(a.URI, prefix) || err != nil {
		t.Fatalf("URI %q is not a base64 PNG data URI: %v", a.URI, err)
	}
	if int64(len(data)) != a.Size {
		t.Fatalf("Size = %d, decoded %d bytes", a.Size, len(data))
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Fatalf("image is %dx%d, want 1x1", b.Dx(), b.Dy())
	}
}

func TestWaitReportsWaitingThenRunning(t *testing.T) {
	call := newCall(t, Name, "wait", `{"seconds":0}`)
	if _, err := New().Call(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	if got := call.Progress.(*recorder).list(); !slices.Equal(got, []string{"waiting", "running"}) {
		t.Fatalf("progress = %v, want [waiting running]", got)
	}
}

func TestWaitingFunctionsReturnContextErrorWhenCancelled(t *testing.T) {
	for _, function := range []string{"sleep", "wait"} {
		t.Run(function, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			call := newCall(t, Name, function, `{"seconds":600}`)
			done := make(chan error, 1)
			go func() {
				_, err := New().Call(ctx, call)
				done <- err
			}()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if function == "wait" {
				// Waiting may or may not have been reported before the cancel; running never is.
				if slices.Contains(call.Progress.(*recorder).list(), "running") {
					t.Fatal("a cancelled wait reported running")
				}
			}
		})
	}
}

func TestToolkitIsEagerAndNamedTest(t *testing.T) {
	var tk catalog.Toolkit = New()
	if tk.Name() != "test" || tk.Deferred() || tk.Description() == "" {
		t.Fatalf("Name=%q Deferred=%v Description=%q", tk.Name(), tk.Deferred(), tk.Description())
	}
	def, err := tk.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Instructions) != 1 || strings.Contains(def.Instructions[0], "\n") {
		t.Fatalf("instructions = %q, want one line", def.Instructions)
	}
	var names []string
	for _, f := range def.Functions {
		names = append(names, f.Name)
	}
	want := []string{"echo", "sleep", "fail", "large", "wait", "gate", "release", "media", "huge_schema", "identity", "confirm_echo"}
	if !slices.Equal(names, want) {
		t.Fatalf("functions = %v, want %v", names, want)
	}
}

func TestConfirmEchoAppendsOneMarkerLinePerRunAndNeedsConfirmation(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "runs")
	args := `{"marker":` + strconv.Quote(marker) + `,"x":1}`
	for range 2 {
		res, err := New().Call(t.Context(), newCall(t, Name, "confirm_echo", args))
		if err != nil {
			t.Fatal(err)
		}
		if got := canonical(t, res.Value); got != `{"marker":`+strconv.Quote(marker)+`,"x":1}` {
			t.Fatalf("value = %s", got)
		}
	}
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Fatalf("marker has %d lines after two runs: %q", n, b)
	}
	def, _ := New().Load(t.Context())
	for _, f := range def.Functions {
		if got := f.Traits.NeedsConfirmation; got != (f.Name == "confirm_echo") {
			t.Errorf("%s: NeedsConfirmation = %v", f.Name, got)
		}
	}
}
