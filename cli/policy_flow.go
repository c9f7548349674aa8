package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/sandcall/sandcall/policy"
)

// explainFlow is the information-flow part of `policy explain`: what the
// run has read before the call (--read), or its label stated directly
// (--run-integrity, --run-readers).
type explainFlow struct {
	read      string
	integrity string
	readers   string
}

func (f *explainFlow) register(fs *flag.FlagSet) {
	fs.StringVar(&f.read, "read", "", "tools whose results the run read before this call, comma-separated, in order: "+
		"each one's label comes from the policy (labels, or the tool's annotations with --demo)")
	fs.StringVar(&f.integrity, "run-integrity", "", "the run's label integrity, trusted or untrusted (joined with --read)")
	fs.StringVar(&f.readers, "run-readers", "", "the run's label readers, comma-separated (joined with --read); empty: public")
}

// check returns a usage problem, or "".
func (f *explainFlow) check() string {
	switch f.integrity {
	case "", "trusted", "untrusted":
		return ""
	}
	return "--run-integrity must be trusted or untrusted"
}

// apply sets req.Run's label and flow.
func (f *explainFlow) apply(c *policy.Checker, req *policy.Request, metaOf func(string) policy.ToolMeta) {
	var l policy.Label
	if f.integrity == "untrusted" {
		l.Untrusted = true
	}
	if f.readers != "" {
		l.Readers = policy.NewReaders(strings.Split(f.readers, ",")...)
	}
	var flow []policy.Source
	if !l.IsZero() {
		flow = append(flow, policy.Source{Tool: "stated run label", Label: l})
	}
	if f.read != "" {
		for i, name := range strings.Split(f.read, ",") {
			name = strings.TrimSpace(name)
			sl, _ := c.SourceLabel(name, metaOf(name))
			l = l.Join(sl)
			if !sl.IsZero() && len(flow) < policy.MaxSources {
				flow = append(flow, policy.Source{Tool: name, Seq: i + 1, Label: sl})
			}
		}
	}
	req.Run.Label, req.Run.Flow = l, flow
}

// print shows the labels the decision saw.
func (f *explainFlow) print(w io.Writer, c *policy.Checker, req *policy.Request, d policy.Decision) {
	own, honour := c.SourceLabel(req.Tool, req.Meta)
	fmt.Fprintf(w, "results:   labelled %s%s\n", own, map[bool]string{true: " (labels in its results' _meta honoured, only to narrow)"}[honour])
	if req.Run.Label.IsZero() && f.read == "" {
		return
	}
	fmt.Fprintf(w, "run label: %s\n", req.Run.Label)
	if d.Flow != "" {
		fmt.Fprintf(w, "flow:      %s\n", d.Flow)
	} else if s := policy.Flow(req.Run.Flow); s != "" {
		fmt.Fprintf(w, "read:      %s\n", s)
	}
}
