package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/openapi"
)

// A small pet store API becomes tools; a call goes to the API with the
// configured token, which the result never shows.
func Example() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"id":7,"name":"Rex","path":"`+r.URL.Path+`"}`)
	}))
	defer api.Close()

	src, err := openapi.Load(context.Background(), openapi.Config{
		Name:      "pets",
		Spec:      "testdata/petstore30.yaml",
		BaseURL:   api.URL + "/v1",
		Auth:      openapi.Auth{Type: openapi.AuthBearer, Env: "PETS_TOKEN"},
		Include:   []string{"tag:pets"},
		LookupEnv: func(string) (string, bool) { return "tok-123", true },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cat, _ := tools.NewCatalog()
	added, _ := src.AddTo(cat)
	fmt.Println(added)

	get, _ := cat.Lookup("pets_get_pet")
	fmt.Println(get.Summary(), get.Effects.ReadOnly)
	res, err := get.Call(context.Background(), json.RawMessage(`{"petId":"7"}`))
	fmt.Println(string(res), err)
	// Output:
	// [pets_list_pets pets_create_pet pets_get_pet]
	// Get one pet by its id. true
	// {"id":7,"name":"Rex","path":"/v1/pets/7"} <nil>
}
