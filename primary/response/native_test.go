package response

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/toolkits/testtk"
)

// TestANativeCallIsAnsweredAsAdmitted: the receipt a new native call is answered with is the
// one it was admitted with, queued, however soon its dispatch moves it on; a replay gets the
// receipt as it stands.
func TestANativeCallIsAnsweredAsAdmitted(t *testing.T) {
	reg := catalog.NewRegistry()
	if err := reg.Register(context.Background(), testtk.New()); err != nil {
		t.Fatal(err)
	}
	r, err := NewManager(Config{Registry: reg}).Open(Spec{Agent: "tester", Toolkits: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// echo settles at once: a receipt read after dispatch began would often be running or
	// completed already.
	for range 500 {
		req := CallRequest{ID: uuid.New(), Toolkit: "test", Function: "echo", Arguments: []byte(`{}`)}
		v, err := r.CallNative(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != Queued || string(v.Outcome) != "null" || v.CallID != req.ID.String() {
			t.Fatalf("a new call was answered %v with outcome %s", v.Status, v.Outcome)
		}
		if _, err := r.Receipt(context.Background(), req.ID, time.Minute); err != nil {
			t.Fatal(err)
		}
		again, err := r.CallNative(context.Background(), req)
		if err != nil || again.Status != Completed || string(again.Outcome) != "{}" {
			t.Fatalf("the replay of a completed call was answered %v with outcome %s, %v", again.Status, again.Outcome, err)
		}
	}
}
