package local

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

//go:embed unsetvar.txt
var unsetVarTxt string

// unsetVarREs are the patterns of unsetvar.txt.
var unsetVarREs = sync.OnceValue(func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, line := range strings.Split(unsetVarTxt, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, regexp.MustCompile(line))
	}
	return out
})

// unsetVarHint is the hint of a failed call whose stderr says a variable
// was not set: the way to pass it on, or to set it. "" when stderr says
// nothing of the kind, or names one of sandcall's own variables.
func unsetVarHint(stderr string, passed []string) string {
	for _, re := range unsetVarREs() {
		m := re.FindStringSubmatch(stderr)
		if m == nil {
			continue
		}
		name := m[1]
		if strings.HasPrefix(name, "SANDCALL_") || strings.HasPrefix(name, "OCTOMIND_") {
			return ""
		}
		if slices.Contains(passed, name) || slices.Contains(envAllow, name) {
			return fmt.Sprintf("The script needs the environment variable %s, which sandcall passes on but which is not set where sandcall runs: "+
				"tell the user to set it in the environment the MCP client starts sandcall with.", name)
		}
		return fmt.Sprintf("The script needs the environment variable %s, which sandcall does not pass on unless told: "+
			"tell the user to start sandcall with --env %s, or to list it under env_passthrough in sandcall.yaml "+
			"(their own config file; a project's needs 'sandcall servers trust').", name, name)
	}
	return ""
}
