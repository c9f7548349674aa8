package mcpserver

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestOutputStoreBounds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	s := newOutputStore(3, 100, time.Minute, clock)

	a, _ := s.put("p", bytes.Repeat([]byte("a"), 40))
	b, _ := s.put("p", bytes.Repeat([]byte("b"), 40))
	if len(a) != len("out_")+32 || a == b {
		t.Fatalf("refs %q %q: want distinct out_ + 32 hex digits", a, b)
	}
	// Bound to the principal.
	if _, ok := s.get("q", a); ok {
		t.Error("another principal read the output")
	}
	if d, ok := s.get("p", a); !ok || string(d) != strings.Repeat("a", 40) {
		t.Error("the owner cannot read the output")
	}
	// Bytes: a third 40-byte output evicts the least recently read (b).
	c, _ := s.put("p", bytes.Repeat([]byte("c"), 40))
	if _, ok := s.get("p", b); ok {
		t.Error("b survived past the byte bound")
	}
	if n, size := s.stats(); n != 2 || size != 80 {
		t.Errorf("stats = %d, %d; want 2, 80", n, size)
	}
	// Count: three small ones leave three.
	for i := 0; i < 3; i++ {
		s.put("p", []byte("x"))
	}
	if n, _ := s.stats(); n != 3 {
		t.Errorf("%d outputs kept, want the bound of 3", n)
	}
	if _, ok := s.get("p", c); ok {
		t.Error("c survived past the count bound")
	}
	// One output over the byte bound is not kept at all.
	if _, ok := s.put("p", make([]byte, 101)); ok {
		t.Error("an output over the byte bound was kept")
	}
	// Expiry: a fixed time after it was stored, reading or not.
	d, _ := s.put("p", []byte("d"))
	now = now.Add(59 * time.Second)
	if _, ok := s.get("p", d); !ok {
		t.Error("expired early")
	}
	now = now.Add(time.Second)
	if _, ok := s.get("p", d); ok {
		t.Error("read after expiry")
	}
	if n, size := s.stats(); n != 0 || size != 0 {
		t.Errorf("after expiry: %d outputs, %d bytes", n, size)
	}
}

func TestPageOf(t *testing.T) {
	data := []byte(`["é日🙂",` + strings.Repeat(`"aé"`, 50) + `]`)
	for limit := 1; limit < 12; limit++ {
		for start := 0; start < 12; start++ {
			var got []byte
			off := start
			for i := 0; i < 1000; i++ {
				p := pageOf(data, off, limit)
				if !utf8.ValidString(p.Data) {
					t.Fatalf("limit %d from %d: page %q splits a character", limit, off, p.Data)
				}
				if i == 0 {
					off = p.Offset // moved to a character start
					if off < start || off > start+3 {
						t.Fatalf("offset %d moved to %d", start, off)
					}
				}
				if p.Offset != off || p.NextOffset != off+len(p.Data) || p.TotalBytes != len(data) {
					t.Fatalf("page %+v at %d", p, off)
				}
				got = append(got, p.Data...)
				off = p.NextOffset
				if p.EOF {
					break
				}
				if len(p.Data) == 0 {
					t.Fatalf("limit %d: empty page before the end at %d", limit, off)
				}
			}
			if !bytes.HasSuffix(data, got) || len(data)-len(got) > start+3 || len(data)-len(got) < start {
				t.Fatalf("limit %d from %d: pages give %q", limit, start, got)
			}
		}
	}
}

// TestOutputStoreFairness: one principal's flood of outputs, large or
// many, evicts its own outputs, not another principal's.
func TestOutputStoreFairness(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
	}{{"large outputs", 30}, {"many small outputs", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newOutputStore(4, 100, time.Minute, nil)
			mine, _ := s.put("alice", bytes.Repeat([]byte("a"), 20))
			for i := 0; i < 50; i++ {
				if _, ok := s.put("mallory", bytes.Repeat([]byte("m"), tc.size)); !ok {
					t.Fatal("mallory's output was not kept")
				}
			}
			if _, ok := s.get("alice", mine); !ok {
				t.Fatal("another principal's flood evicted alice's output")
			}
			if n, size := s.stats(); n > 4 || size > 100 {
				t.Fatalf("stats = %d, %d: over the bounds 4, 100", n, size)
			}
			// Alone, a principal still gets the whole store (plain LRU).
			one := newOutputStore(4, 100, time.Minute, nil)
			first, _ := one.put("alice", []byte("1"))
			for i := 0; i < 4; i++ {
				one.put("alice", []byte("x"))
			}
			if _, ok := one.get("alice", first); ok {
				t.Fatal("the least recently used output survived past the count bound")
			}
			if n, _ := one.stats(); n != 4 {
				t.Fatalf("%d outputs kept, want 4", n)
			}
		})
	}
}
