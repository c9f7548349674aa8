package process

import (
	"testing"
	"time"
)

// TestDemandSpares: the warm workers demand calls for follow the busiest
// second of the last warmHold and the time a start takes, and fall to
// nothing once no worker was taken for warmHold.
func TestDemandSpares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var d demand
	if n := d.spares(t0); n != 0 || !d.idle(t0) {
		t.Fatalf("no takes: spares %d, idle %v", n, d.idle(t0))
	}
	d.took(t0)
	if n := d.spares(t0); n != 1 || d.idle(t0) {
		t.Errorf("one take, no start measured (50 ms): spares %d, want 1", n)
	}
	// 80 takes over the next second, starts of 30 ms: 80 × 2 × 30 ms = 4.8.
	for i := range 80 {
		d.took(t0.Add(time.Duration(i) * 12 * time.Millisecond))
	}
	d.started(30 * time.Millisecond)
	if n := d.spares(t0.Add(time.Second)); n != 5 {
		t.Errorf("81 takes in a second, 30 ms starts: spares %d, want 5", n)
	}
	// Starts slowing to 90 ms weigh in by a quarter: 30 -> 45 ms.
	d.started(90 * time.Millisecond)
	if n := d.spares(t0.Add(time.Second)); n != 8 {
		t.Errorf("45 ms starts: spares %d, want 8", n)
	}
	// The busiest second is remembered for warmHold, then forgotten.
	later := t0.Add(warmHold)
	if n := d.spares(later); n != 8 || d.idle(later) {
		t.Errorf("within warmHold: spares %d, idle %v", n, d.idle(later))
	}
	gone := t0.Add(time.Second + warmHold + time.Millisecond)
	if n := d.spares(gone); n != 0 || !d.idle(gone) {
		t.Errorf("after warmHold: spares %d, idle %v; want 0, true", n, d.idle(gone))
	}
}

// TestDemandRemembersBoundedTakes: a flood of takes keeps only the latest
// maxTakes.
func TestDemandRemembersBoundedTakes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var d demand
	for i := range 10 * maxTakes {
		d.took(t0.Add(time.Duration(i) * time.Microsecond))
	}
	if len(d.takes) != maxTakes {
		t.Fatalf("%d takes kept, want %d", len(d.takes), maxTakes)
	}
	if got := d.takes[0]; !got.Equal(t0.Add(time.Duration(9*maxTakes) * time.Microsecond)) {
		t.Errorf("oldest kept %v", got)
	}
}
