package plan_test

import (
	"fmt"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/plan"
)

func ExampleOf() {
	src := `const team = await tools.get_team_members({ department: "engineering" });
const name = input.tool;
return Promise.all(team.map((m) => tools[name]({ member_id: m.id })));`
	p, err := plan.Of(sandbox.Program{Source: src}, nil)
	if err != nil {
		panic(err)
	}
	for _, t := range p.Tools {
		fmt.Printf("%s (line %d)\n", t.Name, t.Line)
	}
	fmt.Println("dynamic:", p.Dynamic)
	// Output:
	// get_team_members (line 1)
	// dynamic: 1
}
