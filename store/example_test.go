package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sandcall/sandcall/store"
)

// A rate limit of 2 calls per minute, counted in the store (with
// store.Open("redis://…") every replica counts in the same bucket).
func Example() {
	s, _ := store.Open("memory:")
	defer s.Close()
	ctx := context.Background()
	for i := range 3 {
		ok, _ := s.Take(ctx, "rate:alice", 2, time.Minute)
		fmt.Println(i, ok)
	}
	// Output:
	// 0 true
	// 1 true
	// 2 false
}
