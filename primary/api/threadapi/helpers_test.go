package threadapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

// patience bounds every wait of these tests; nothing waits for it unless a test fails.
const patience = 30 * time.Second

const channel = "!room:example.org"

// start is a primary whose shells do not inherit HOME's profile.
func start(t *testing.T, opts ...testenv.Option) *testenv.Env {
	t.Helper()
	return testenv.Start(t, append([]testenv.Option{testenv.WithConfig(func(c *primary.Config) {
		c.Shells.EnvAllow = []string{"LANG"}
	})}, opts...)...)
}

func feedClient(env *testenv.Env) threadv1.ThreadEventServiceClient {
	return threadv1.NewThreadEventServiceClient(env.Conn)
}

// addOperator creates an operator.
func addOperator(t *testing.T, env *testenv.Env, name string, role store.OperatorRole) {
	t.Helper()
	if _, err := operators.Add(context.Background(), env.Primary.Internals().Store, name, role); err != nil {
		t.Fatalf("add operator %s: %v", name, err)
	}
}

// link links the matrix account user to person.
func link(t *testing.T, env *testenv.Env, user, person string) {
	t.Helper()
	if _, _, err := env.Primary.Internals().Store.LinkIdentity(context.Background(),
		store.NewIdentityLink{Surface: "matrix", ChatUserID: user, Person: person}, "admin"); err != nil {
		t.Fatalf("link %s: %v", user, err)
	}
}

func matrix(user string) *threadv1.ChatIdentity {
	return &threadv1.ChatIdentity{Surface: "matrix", ChatUserId: user}
}

// openIn opens a foreground response of requester in thread, whose requester the runtime
// vouches for.
func openIn(t *testing.T, env *testenv.Env, requester, thread string) string {
	t.Helper()
	return env.Open(t, func(r *responsev1.OpenResponseRequest) {
		r.RequesterId = requester
		r.Conversation = &conversationv1.Conversation{Channel: channel, Thread: thread}
		r.Origin = responsev1.Origin_ORIGIN_FOREGROUND
		r.Flags = append(r.Flags, "requester_trusted")
	})
}

func setMode(t *testing.T, env *testenv.Env, thread string, mode store.Mode) {
	t.Helper()
	if _, err := env.Primary.Internals().Store.SetConversationMode(context.Background(), channel, thread, mode, "test"); err != nil {
		t.Fatal(err)
	}
}

// callNative calls an interaction tool natively and waits for its receipt to settle.
func callNative(t *testing.T, env *testenv.Env, responseID, function, args string) *responsev1.Receipt {
	t.Helper()
	res, err := env.Runtime.CallTool(context.Background(), &responsev1.CallToolRequest{
		ResponseId: responseID, CallId: uuid.NewString(), Toolkit: "interaction", Function: function,
		ArgumentsJson: args, Wait: durationpb.New(patience),
	})
	if err != nil || res.GetReceipt().GetStatus() != responsev1.CallStatus_CALL_STATUS_COMPLETED {
		t.Fatalf("%s %s: %v, %v", function, args, res, err)
	}
	return res.GetReceipt()
}

// subscriber is one open Subscribe stream, cancelled at cleanup.
type subscriber struct {
	stream grpc.ServerStreamingClient[threadv1.SubscribeResponse]
	cancel context.CancelFunc
}

// subscribe opens Subscribe and checks its first message is the empty one.
func subscribe(t *testing.T, env *testenv.Env, req *threadv1.SubscribeRequest) *subscriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	stream, err := feedClient(env).Subscribe(ctx, req)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	first, err := stream.Recv()
	if err != nil || first.GetItem() != nil || first.GetChunk() != nil || first.GetCursor() != "" {
		t.Fatalf("first message %v, %v; want the empty one", first, err)
	}
	return &subscriber{stream: stream, cancel: cancel}
}

// next is the stream's next message.
func (s *subscriber) next(t *testing.T) *threadv1.SubscribeResponse {
	t.Helper()
	m, err := s.stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return m
}

// until reads until an item of key with the change comes, and returns its message.
func (s *subscriber) until(t *testing.T, key string, change threadv1.ItemChange) *threadv1.SubscribeResponse {
	t.Helper()
	for {
		m := s.next(t)
		if it := m.GetItem(); it.GetItemKey() == key && it.GetChange() == change {
			return m
		}
	}
}

// refusedWith checks err's code and whole message.
func refusedWith(t *testing.T, err error, code string, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code().String() != code || st.Message() != msg {
		t.Fatalf("got %v; want %s %q", err, code, msg)
	}
}

// errMessage is err's status message.
func errMessage(err error) string {
	st, _ := status.FromError(err)
	return st.Message()
}
