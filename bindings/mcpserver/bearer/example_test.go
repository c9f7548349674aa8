package bearer_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/policy"
)

// A handler that only the holder of a static token may reach.
func Example() {
	v, err := bearer.New([]bearer.Token{{SHA256: bearer.HashToken("s3cret"), Principal: policy.Principal{ID: "ci"}}})
	if err != nil {
		panic(err)
	}
	v.SetMetadata(func(*http.Request) string { return "https://sandcall.example/.well-known/oauth-protected-resource/mcp" })
	h := v.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	for _, tok := range []string{"s3cret", "guess"} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Body.String() != "" && w.Code == 200)
	}
	// Output:
	// 200 true
	// 401 false
}
