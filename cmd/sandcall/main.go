// Command sandcall is an MCP server for programmatic tool calling ("code
// mode"): a model submits a program through the run_code tool, the program
// calls allowlisted tools, the host authorizes every call, and only the
// program's result returns to the model.
//
// The commands live in package [github.com/sandcall/sandcall/cli]; run
// `sandcall help` for the list.
package main

import (
	"os"

	"github.com/sandcall/sandcall/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
