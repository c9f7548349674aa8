package upstream

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestFrameFilter: lines up to the cap pass as they are; a longer line is
// replaced by an error answering its top-level id (wherever the id sits,
// whatever "id" keys its result holds), or dropped when it is not an
// answer (a notification, a request of the server's).
func TestFrameFilter(t *testing.T) {
	big := strings.Repeat("x", 200)
	answer := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32090,"message":"` + errTooLargeMessage + `"}}` + "\n"
	}
	cases := []struct{ name, in, want string }{
		{"small lines pass", "{\"id\":1}\n{\"id\":2}\n", "{\"id\":1}\n{\"id\":2}\n"},
		{"pretty-printed passes", "{\n  \"id\": 1\n}\n", "{\n  \"id\": 1\n}\n"},
		{"id first", `{"jsonrpc":"2.0","id":7,"result":{"t":"` + big + `"}}` + "\n", answer("7")},
		{"id last", `{"result":{"content":[{"id":99,"t":"` + big + `"}]},"jsonrpc":"2.0","id":8}` + "\n", answer("8")},
		{"string id with escapes", `{"result":"` + big + `","id":"a\"b\\c"}` + "\n", answer(`"a\"b\\c"`)},
		{"spaces", `{ "result" : "` + big + `" , "id" : 12 }` + "\n", answer("12")},
		{"notification dropped", `{"jsonrpc":"2.0","method":"notifications/message","params":{"d":"` + big + `"}}` + "\n", ""},
		{"request dropped", `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"d":"` + big + `"}}` + "\n", ""},
		{"object id dropped", `{"id":{"x":1},"result":"` + big + `"}` + "\n", ""},
		{"then the next line", `{"id":5,"result":"` + big + `"}` + "\n{\"id\":6}\n", answer("5") + "{\"id\":6}\n"},
		{"no newline at EOF", `{"id":4,"result":"` + big + `"}`, answer("4")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(newFrameFilter(strings.NewReader(tc.in), 100))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// BenchmarkFrameFilter: reading stdio frames of 1 KiB and 1 MiB through
// frameFilter against reading them as they are.
func BenchmarkFrameFilter(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		line := `{"jsonrpc":"2.0","id":1,"result":{"t":"` + strings.Repeat("x", size) + `"}}` + "\n"
		in := strings.Repeat(line, max(1, 4<<20/len(line)))
		buf := make([]byte, 32<<10)
		for _, mode := range []string{"raw", "filtered"} {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, mode), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					var r io.Reader = strings.NewReader(in)
					if mode == "filtered" {
						r = newFrameFilter(r, MaxResponseBytes)
					}
					for {
						if _, err := r.Read(buf); err != nil {
							break
						}
					}
				}
			})
		}
	}
}
