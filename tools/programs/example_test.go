package programs_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcall/sandcall/tools/programs"
)

func ExampleLoadDir() {
	dir, _ := os.MkdirTemp("", "programs")
	defer os.RemoveAll(dir)
	src := `// @description Which engineers went over their travel budget in a quarter?
// @param *quarter string Q1, Q2, Q3 or Q4
// @readonly
const team = await tools.get_team_members({ department: "engineering" });
const rows = await Promise.all(team.map((m) => tools.get_expenses({ member_id: m.id, quarter: args.quarter })));
return rows.length;
`
	_ = os.WriteFile(filepath.Join(dir, "travel_overruns.js"), []byte(src), 0o644)
	reg := programs.NewRegistry()
	d, _ := programs.LoadDir(reg, programs.DirConfig{Dir: dir})
	for _, t := range d.Tools() {
		p, _ := reg.Of(t)
		fmt.Println(t.Name, t.Source, t.Effects.ReadOnly)
		fmt.Println(t.Description)
		for _, c := range p.Plan.Tools {
			fmt.Printf("  calls %s (line %d)\n", c.Name, c.Line)
		}
	}
	// Output:
	// travel_overruns program true
	// Which engineers went over their travel budget in a quarter?
	//   calls get_team_members (line 4)
	//   calls get_expenses (line 5)
}
