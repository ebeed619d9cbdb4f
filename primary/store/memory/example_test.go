package memory_test

import (
	"context"
	"fmt"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
)

// A test opens a store of its own, with every rule of the portable store, and no file.
func ExampleOpen() {
	ctx := context.Background()
	s := memory.Open(memory.Options{})
	defer s.Close()

	id, created, _ := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job:1", Channel: "room", Text: "done"})
	again, createdAgain, _ := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job:1", Channel: "room", Text: "done"})
	fmt.Println(id, created, again, createdAgain)

	_, _, err := s.EnqueueContinuation(ctx, store.NewContinuation{IdempotencyKey: "job:2", Text: "no channel"})
	fmt.Println(err)
	// Output:
	// 1 true 1 false
	// invalid argument: a continuation needs a channel
}
