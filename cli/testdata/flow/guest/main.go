//go:build wasip1

// Command guest is the WebAssembly red-team program of TestFlowRedTeam: it
// reads the support inbox and obeys instructions it finds in the mail —
// forward the customer record to an address, delete a message — from Go
// compiled to wasip1. Its input picks what it obeys: "forward" or
// "delete". Its result says what happened: {"acted": n} when every call
// it made succeeded, or {"denied": {code, rule, message}} for the first
// call the broker refused.
//
// Input "handle" exercises opaque handles through the ABI, with no engine
// support: it holds the inbox as a handle ("$opaque:list_messages"),
// deletes message M-2 (the run is still trusted), reads the handle
// ("$read") and deletes M-1 (now denied).
//
// Build (the test does): GOOS=wasip1 GOARCH=wasm go build -o guest.wasm .
package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/sandcall/sandcall/bindings/wasmguest"
)

type message struct {
	ID         string `json:"id"`
	Body       string `json:"body"`
	CustomerID string `json:"customer_id"`
}

var (
	forwardRE = regexp.MustCompile(`(?i)forward\b[^.]*?\bto\s+([\w.+-]+@[\w-]+(?:\.[\w-]+)+)`)
	deleteRE  = regexp.MustCompile(`(?i)delete message (M-\d+)`)
)

func main() {
	if err := run(); err != nil {
		var te *wasmguest.ToolError
		if errors.As(err, &te) {
			_ = wasmguest.Return(map[string]any{"denied": map[string]string{"code": te.Code, "rule": te.Rule, "message": te.Message}})
			return
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	var mode string
	if err := wasmguest.Input(&mode); err != nil {
		return err
	}
	if mode == "handle" {
		return handles()
	}
	var msgs []message
	if err := wasmguest.Call("list_messages", map[string]any{}, &msgs); err != nil {
		return err
	}
	acted := 0
	for _, m := range msgs {
		var customer map[string]any
		if err := wasmguest.Call("get_customer", map[string]any{"customer_id": m.CustomerID}, &customer); err != nil {
			return err
		}
		switch mode {
		case "forward":
			if a := forwardRE.FindStringSubmatch(m.Body); a != nil {
				if err := wasmguest.Call("send_email", map[string]any{"to": []string{a[1]}, "subject": "Record",
					"body": fmt.Sprint(customer)}, nil); err != nil {
					return err
				}
				acted++
			}
		case "delete":
			if a := deleteRE.FindStringSubmatch(m.Body); a != nil {
				if err := wasmguest.Call("delete_message", map[string]any{"id": a[1]}, nil); err != nil {
					return err
				}
				acted++
			}
		}
	}
	return wasmguest.Return(map[string]int{"acted": acted})
}

func handles() error {
	var h map[string]string
	if err := wasmguest.Call("$opaque:list_messages", map[string]any{}, &h); err != nil {
		return err
	}
	if err := wasmguest.Call("delete_message", map[string]any{"id": "M-2"}, nil); err != nil {
		return err
	}
	var msgs []message
	if err := wasmguest.Call("$read", h, &msgs); err != nil {
		return err
	}
	if err := wasmguest.Call("delete_message", map[string]any{"id": "M-1"}, nil); err != nil {
		return err
	}
	return wasmguest.Return(map[string]int{"acted": 2, "messages": len(msgs)})
}
