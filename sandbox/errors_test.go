package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestErrorIs(t *testing.T) {
	e := Errorf(ETimeout, "", "too slow")
	if !errors.Is(e, ErrTimeout) || !errors.Is(e, context.DeadlineExceeded) {
		t.Fatal("E_TIMEOUT must match ErrTimeout and context.DeadlineExceeded")
	}
	if errors.Is(e, ErrCancelled) || errors.Is(e, context.Canceled) {
		t.Fatal("E_TIMEOUT must not match cancellation")
	}
	c := fmt.Errorf("wrapped: %w", Errorf(ECancelled, "", "bye"))
	if !errors.Is(c, context.Canceled) || !errors.Is(c, ErrCancelled) {
		t.Fatal("wrapped E_CANCELLED must match")
	}
	if errors.Is(Errorf(EToolArgs, "", "x"), Errorf(EToolArgs, "", "y")) {
		t.Fatal("only sentinels (empty message) match by code")
	}
}

func TestAsError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Code
	}{
		{context.DeadlineExceeded, ETimeout},
		{fmt.Errorf("x: %w", context.Canceled), ECancelled},
		{errors.New("open /home/op/secret: denied"), EInternal},
		{fmt.Errorf("x: %w", Errorf(EToolArgs, "h", "m")), EToolArgs},
	} {
		got := AsError(tc.err, "")
		if got.Code != tc.want {
			t.Errorf("AsError(%v) = %s, want %s", tc.err, got.Code, tc.want)
		}
		if strings.Contains(got.Message, "/home") {
			t.Errorf("AsError leaks the Go error text: %q", got.Message)
		}
	}
	if AsError(nil, "") != nil {
		t.Error("AsError(nil) != nil")
	}
}

func TestCap(t *testing.T) {
	s := strings.Repeat("é", 10000)
	c := Cap(s, MaxMessageBytes)
	if len(c) > MaxMessageBytes || !utf8.ValidString(c) || !strings.HasSuffix(c, "(truncated)") {
		t.Fatalf("Cap: %d bytes, valid %v", len(c), utf8.ValidString(c))
	}
	if Cap("short", 10) != "short" {
		t.Fatal("Cap changed a short string")
	}
	if e := Errorf(EGuestError, strings.Repeat("h", 1<<20), strings.Repeat("m", 1<<20)); len(e.Message) > MaxMessageBytes || len(e.Hint) > MaxMessageBytes {
		t.Fatal("Errorf does not cap")
	}
}

func TestCodesClosed(t *testing.T) {
	if len(Codes) != 20 {
		t.Fatalf("%d codes, docs/errors.md lists 20", len(Codes))
	}
	for _, c := range Codes {
		if !c.Valid() || !strings.HasPrefix(string(c), "E_") {
			t.Errorf("bad code %q", c)
		}
	}
	if Code("E_NOPE").Valid() {
		t.Error("unknown code reported valid")
	}
}

func TestLimitsWithin(t *testing.T) {
	l := Limits{Timeout: time.Minute, MaxCalls: 5}.Within(Limits{Timeout: time.Second})
	if l.Timeout != time.Second || l.MaxCalls != 5 || l.MaxInFlight != 16 {
		t.Fatalf("Within = %+v", l)
	}
}

func ExampleError() {
	err := fmt.Errorf("run: %w", Errorf(ETimeout, "Do less work.", "the run exceeded its time limit"))
	fmt.Println(errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded))
	var e *Error
	errors.As(err, &e)
	fmt.Println(e.Code, e.Hint)
	// Output:
	// true true
	// E_TIMEOUT Do less work.
}

// TestErrorsDocListsCodes: docs/errors.md, the reference clients read, has
// a section for every code, in the order of Codes, and for no other.
func TestErrorsDocListsCodes(t *testing.T) {
	b, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, l := range strings.Split(string(b), "\n") {
		if c, ok := strings.CutPrefix(l, "### "); ok && strings.HasPrefix(c, "E_") {
			doc = append(doc, c)
		}
	}
	var want []string
	for _, c := range Codes {
		want = append(want, string(c))
	}
	if !slices.Equal(doc, want) {
		t.Errorf("docs/errors.md has sections for\n\t%v\nwant (sandbox.Codes)\n\t%v", doc, want)
	}
}
