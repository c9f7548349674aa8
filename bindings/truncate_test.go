package bindings

import (
	"bytes"
	"encoding/json"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

func TestCutRows(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		budget int
		mark   bool
		want   string // "" = cannot cut
		cut    rowCut
	}{
		{"array prefix", `[1,22,333,4444]`, 10, true, `[1,22,333]`, rowCut{Kept: 3, Omitted: 1}},
		{"array exact fit", `[1,22,333,4444]`, 9, true, `[1,22]`, rowCut{Kept: 2, Omitted: 2}},
		{"array whitespace dropped", " [ 1 ,\n 2 , 3 ] ", 6, true, `[1,2]`, rowCut{Kept: 2, Omitted: 1}},
		{"array of objects kept whole", `[{"a":"x,]"},{"a":"y"}]`, 16, true, `[{"a":"x,]"}]`, rowCut{Kept: 1, Omitted: 1}},
		{"first item too big", `["aaaaaaaaaa","b"]`, 8, true, "", rowCut{}},
		{"empty array", `[   ]`, 2, true, "", rowCut{}},
		{"huge string", `"` + strings.Repeat("x", 100) + `"`, 50, true, "", rowCut{}},
		{"number", `12345678901`, 5, true, "", rowCut{}},
		{"invalid json", `[1,2,3`, 4, true, "", rowCut{}},
		{"object with rows, marked", `{"total":4,"rows":[1,2,3,4]}`, 51, true,
			`{"total":4,"rows":[1],"truncated":true,"omitted":3}`, rowCut{Field: "rows", Kept: 1, Omitted: 3, Marked: true}},
		{"object with rows, unmarked (direct)", `{"total":4,"rows":[1,2,3,4]}`, 26, false,
			`{"total":4,"rows":[1,2,3]}`, rowCut{Field: "rows", Kept: 3, Omitted: 1}},
		{"object: largest array is cut", `{"tags":["a"],"rows":[10,20,30],"n":1}`, 61, true,
			`{"tags":["a"],"rows":[10],"n":1,"truncated":true,"omitted":2}`, rowCut{Field: "rows", Kept: 1, Omitted: 2, Marked: true}},
		{"object has its own truncated key", `{"truncated":false,"rows":[1,2,3]}`, 32, true,
			`{"truncated":false,"rows":[1,2]}`, rowCut{Field: "rows", Kept: 2, Omitted: 1}},
		{"object with escaped marker key", `{"omit\u0074ed":0,"rows":[1,2,3]}`, 31, true,
			`{"omit\u0074ed":0,"rows":[1,2]}`, rowCut{Field: "rows", Kept: 2, Omitted: 1}},
		{"object rest too big", `{"note":"` + strings.Repeat("n", 50) + `","rows":[1,2]}`, 40, true, "", rowCut{}},
		{"object without array", `{"a":"` + strings.Repeat("n", 50) + `"}`, 20, true, "", rowCut{}},
		{"deep object", `{"data":{"rows":[1,2,3,4,5,6,7,8,9]}}`, 20, true, "", rowCut{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, c, ok := cutRows([]byte(tc.in), tc.budget, tc.mark)
			if tc.want == "" {
				if ok {
					t.Fatalf("cut to %s, want no cut", out)
				}
				return
			}
			if !ok {
				t.Fatalf("no cut, want %s", tc.want)
			}
			if string(out) != tc.want || c != tc.cut {
				t.Fatalf("cut = %s %+v, want %s %+v", out, c, tc.want, tc.cut)
			}
			if len(out) > tc.budget || !json.Valid(out) {
				t.Fatalf("cut %s: %d bytes (budget %d), valid %v", out, len(out), tc.budget, json.Valid(out))
			}
		})
	}
}

// TestCutRowsExact checks, for every budget, that the cut is as long as
// the budget allows: one more item would not fit.
func TestCutRowsExact(t *testing.T) {
	var items []string
	for i := range 200 {
		items = append(items, `{"id":`+strconv.Itoa(i)+`,"name":"`+strings.Repeat("x", i%7)+`"}`)
	}
	arr := "[" + strings.Join(items, ",") + "]"
	obj := `{"page":1,"rows":` + arr + `}`
	for budget := 2; budget < len(arr); budget += 7 {
		out, c, ok := cutRows([]byte(arr), budget, true)
		if !ok {
			if budget >= 2+len(items[0]) {
				t.Fatalf("budget %d: no cut", budget)
			}
			continue
		}
		if len(out) > budget || c.Kept+c.Omitted != len(items) {
			t.Fatalf("budget %d: %d bytes, %+v", budget, len(out), c)
		}
		if c.Omitted > 0 && len(out)+1+len(items[c.Kept]) <= budget {
			t.Fatalf("budget %d: kept %d items, but one more fits", budget, c.Kept)
		}
		out, c, ok = cutRows([]byte(obj), budget, true)
		if !ok {
			continue
		}
		if len(out) > budget {
			t.Fatalf("object, budget %d: %d bytes", budget, len(out))
		}
		more := `{"page":1,"rows":[` + strings.Join(items[:c.Kept+1], ",") + `],"truncated":true,"omitted":` + strconv.Itoa(c.Omitted-1) + `}`
		if c.Omitted > 1 && len(more) <= budget {
			t.Fatalf("object, budget %d: kept %d items, but one more fits", budget, c.Kept)
		}
	}
}

// TestCutRowsMemory: cutting an array of millions of tiny items allocates
// about its cut, not a record per item (a tool's 8 MiB of "0," used to cost
// 326 MiB of spans).
func TestCutRowsMemory(t *testing.T) {
	arr := append([]byte("["), bytes.Repeat([]byte("0,"), 4<<20)...)
	arr = append(arr, '0', ']')
	obj := append(append([]byte(`{"x":1,"rows":`), arr...), '}')
	const budget = 1 << 20
	for _, in := range [][]byte{arr, obj} {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		out, c, ok := cutRows(in, budget, true)
		runtime.ReadMemStats(&m1)
		if !ok || len(out) > budget || c.Kept+c.Omitted != 4<<20+1 {
			t.Fatalf("cut %d bytes: ok %v, %d bytes, %+v", len(in), ok, len(out), c)
		}
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 4*budget {
			t.Errorf("cutting %d bytes to %d allocated %d bytes", len(in), budget, alloc)
		}
	}
}

func TestAddKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{}`, `{"next_action":"go"}`},
		{` {"a":1} `, `{"a":1,"next_action":"go"}`},
		{`{"a":{"next_action":1}}`, `{"a":{"next_action":1},"next_action":"go"}`},
		{`{"next_action":"mine"}`, ""},
		{`[1]`, ""},
		{`"s"`, ""},
		{`{"a":`, ""},
	}
	for _, tc := range tests {
		out, ok := addKey([]byte(tc.in), "next_action", "go")
		if tc.want == "" {
			if ok || string(out) != tc.in {
				t.Errorf("addKey(%s) = %s, %v; want it unchanged", tc.in, out, ok)
			}
			continue
		}
		if !ok || string(out) != tc.want {
			t.Errorf("addKey(%s) = %s, %v; want %s", tc.in, out, ok, tc.want)
		}
	}
}

// FuzzTruncateRows: whatever the input and budget, a cut is valid JSON
// within the budget, keeps a prefix of whole items and counts the rest;
// an array cut is maximal.
func FuzzTruncateRows(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[{"a":"]"},{"b":[1,[2]]}]`, `{"rows":[1,2,3],"n":"x"}`,
		`{"a":[],"b":["\"",""]}`, ` [ "\u00e9" , null , true ] `, `{"truncated":1,"r":[1,2]}`, `"abc"`, `[[[[]]]]`} {
		f.Add([]byte(s), uint16(8), true)
		f.Add([]byte(s), uint16(12), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, budget16 uint16, mark bool) {
		budget := int(budget16)
		out, c, ok := cutRows(in, budget, mark)
		if !ok {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("cut invalid input %q", in)
		}
		if len(out) > budget || !json.Valid(out) {
			t.Fatalf("cut %q to %q: %d bytes (budget %d), valid %v", in, out, len(out), budget, json.Valid(out))
		}
		if c.Kept < 1 || c.Omitted < 0 {
			t.Fatalf("cut %+v", c)
		}
		switch jsonscan.Trim(in)[0] {
		case '[':
			var all, kept []json.RawMessage
			_ = json.Unmarshal(in, &all)
			if err := json.Unmarshal(out, &kept); err != nil {
				t.Fatal(err)
			}
			if len(kept) != c.Kept || c.Kept+c.Omitted != len(all) {
				t.Fatalf("kept %d of %d, cut says %+v", len(kept), len(all), c)
			}
			for i := range kept {
				if !bytes.Equal(kept[i], all[i]) {
					t.Fatalf("item %d: %s, want %s", i, kept[i], all[i])
				}
			}
			if c.Omitted > 0 && len(out)+1+len(all[c.Kept]) <= budget {
				t.Fatalf("cut %q to %q, but one more item fits in %d", in, out, budget)
			}
		case '{':
			var all, kept map[string]json.RawMessage
			_ = json.Unmarshal(in, &all)
			if topLevelKeys(in) != len(all) {
				return // duplicate keys: a map cannot say which one was cut
			}
			if err := json.Unmarshal(out, &kept); err != nil {
				t.Fatal(err)
			}
			var allRows, keptRows []json.RawMessage
			_ = json.Unmarshal(all[c.Field], &allRows)
			if err := json.Unmarshal(kept[c.Field], &keptRows); err != nil {
				t.Fatal(err)
			}
			if len(keptRows) != c.Kept || c.Kept+c.Omitted != len(allRows) {
				t.Fatalf("kept %d of %d, cut says %+v", len(keptRows), len(allRows), c)
			}
			for k, v := range all {
				if k == c.Field {
					continue
				}
				if !reflect.DeepEqual(kept[k], v) {
					t.Fatalf("member %q changed: %s, was %s", k, kept[k], v)
				}
			}
			if c.Marked && (string(kept["truncated"]) != "true" || string(kept["omitted"]) != strconv.Itoa(c.Omitted)) {
				t.Fatalf("markers missing: %s", out)
			}
		default:
			t.Fatalf("cut a scalar: %q", in)
		}
	})
}

// topLevelKeys counts the members of the JSON object in, duplicates
// included.
func topLevelKeys(in []byte) int {
	dec := json.NewDecoder(bytes.NewReader(in))
	if _, err := dec.Token(); err != nil {
		return -1
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return -1
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return -1
		}
		n++
	}
	return n
}

// BenchmarkCutRows cuts a 1 MiB array of small objects, and an object
// holding it, to 64 KiB (the path of an over-budget result only).
func BenchmarkCutRows(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":` + strconv.Itoa(i) + `,"name":"item \"` + strconv.Itoa(i) + `\"","tags":["a","b"]}`)
	}
	sb.WriteByte(']')
	arr := []byte(sb.String())
	obj := []byte(`{"page":1,"rows":` + sb.String() + `}`)
	for _, in := range []struct {
		name string
		data []byte
	}{{"array", arr}, {"object", obj}} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := cutRows(in.data, 64<<10, true); !ok {
					b.Fatal("no cut")
				}
			}
		})
	}
}
