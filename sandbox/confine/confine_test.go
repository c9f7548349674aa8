package confine

import (
	"strings"
	"testing"
)

func TestTierAndString(t *testing.T) {
	var r Report
	if got := r.Tier(); got != "process" {
		t.Errorf("zero Report tier = %q, want process", got)
	}
	r.set(LayerSeccomp, true, "x")
	r.set(LayerPgroup, true, "y")
	r.set(LayerUserns, false, "no")
	r.set(LayerRlimits, true, "z")
	r = r.ordered()
	if got, want := r.Tier(), "process+rlimits+seccomp"; got != want {
		t.Errorf("Tier = %q, want %q", got, want)
	}
	s := r.String()
	for _, want := range []string{"tier: process+rlimits+seccomp", "userns", "skipped", "no"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}

func TestConfigDisabled(t *testing.T) {
	c := Config{Disable: []Layer{LayerSeccomp}}
	if !c.disabled(LayerSeccomp) || c.disabled(LayerLandlock) {
		t.Error("disabled() wrong")
	}
}
