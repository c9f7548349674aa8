package tools

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestValidNameIsThePattern: validName accepts exactly what the documented
// pattern ^[A-Za-z_][A-Za-z0-9_]{0,63}$ accepts.
func TestValidNameIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	cases := []string{"", "a", "_", "A", "0", "a0", "0a", "a-b", "a b", "a\n", "é", "get_sum",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "_" + strings.Repeat("9", 63), "a.b", "a$"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ_09-. \n\x00é"
	for range 5000 {
		b := make([]byte, r.IntN(70))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := validName(s), re.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
