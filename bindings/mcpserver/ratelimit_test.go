package mcpserver

import (
	"fmt"
	"testing"
	"time"
)

// TestTokenBucket: a key gets its burst at once, then one request per
// 1/rate; keys are independent; the wait reported is until the next token.
func TestTokenBucket(t *testing.T) {
	now := time.Unix(0, 0)
	tb := NewTokenBucket(2, 3)
	tb.now = func() time.Time { return now }
	for i := range 3 {
		if ok, _ := tb.Allow("a"); !ok {
			t.Fatalf("request %d within the burst refused", i+1)
		}
	}
	ok, wait := tb.Allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Errorf("past the burst: %v, wait %v; want refused, 500ms", ok, wait)
	}
	if ok, _ := tb.Allow("b"); !ok {
		t.Errorf("another key is limited by the first")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := tb.Allow("a"); !ok {
		t.Errorf("after the refill time: refused")
	}
	if ok, _ := tb.Allow("a"); ok {
		t.Errorf("a refill of one token allowed two requests")
	}
}

func ExampleTokenBucket() {
	// Bursts of 2 requests, then one every 10 seconds, per principal.
	rl := NewTokenBucket(0.1, 2)
	for i := range 3 {
		ok, wait := rl.Allow("alice")
		fmt.Println(i+1, ok, wait > 9*time.Second)
	}
	ok, _ := rl.Allow("bob")
	fmt.Println("bob", ok)
	// Output:
	// 1 true false
	// 2 true false
	// 3 false true
	// bob true
}
