package bindings_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

func ExampleBroker_CallDirect() {
	greet := &tools.Tool{
		Name:        "greet",
		Description: "Says hello.",
		Handler: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"hello"`), nil
		},
	}
	wipe := &tools.Tool{
		Name:        "wipe",
		Description: "Deletes everything.",
		Effects:     tools.Effects{Destructive: true},
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`true`), nil
		},
	}
	catalog, _ := tools.NewCatalog(greet, wipe)
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: catalog})

	res, err := broker.CallDirect(context.Background(), bindings.LocalPrincipal, "greet", nil)
	fmt.Println(string(res), err)

	_, err = broker.CallDirect(context.Background(), bindings.LocalPrincipal, "../etc/passwd", nil)
	fmt.Println(errors.Is(err, sandbox.ErrToolUnknown))

	// Without a policy, destructive tools are direct-only: not bound in programs.
	for _, t := range broker.Exposed(tools.Code, bindings.LocalPrincipal) {
		fmt.Println("bound in programs:", t.Name)
	}
	// Output:
	// "hello" <nil>
	// true
	// bound in programs: greet
}
