package search_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// A clinic's catalog, whose words the built-in word knowledge does not
// tie together.
func clinicTools() []*tools.Tool {
	return []*tools.Tool{
		{Name: "ehr_create_encounter", Source: "ehr", Description: "Create an encounter for a patient."},
		{Name: "ehr_list_encounters", Source: "ehr", Description: "List a patient's encounters."},
		{Name: "ehr_prescribe_medication", Source: "ehr", Description: "Prescribe a medication to a patient."},
		{Name: "ehr_get_patient", Source: "ehr", Description: "Get a patient's chart."},
		{Name: "billing_create_claim", Source: "billing", Description: "Create an insurance claim."},
	}
}

// clinicWords is an operator's word file for that domain: a synonym, a
// phrasal verb, a concept and a service, with no Go.
const clinicWords = `# A clinic's words.
[synonyms]
word: encounter visit appointment

[phrasal]
write up => prescribe

[concepts]
concept: claim
when: says bill the insurer | bill their insurance
example: bill their insurance for the visit

[services]
names: epicor
`

// TestOperatorWords: an operator's word file changes what a search finds
// first, confidently, in a domain the built-in words do not know.
func TestOperatorWords(t *testing.T) {
	lx, err := search.ParseLexicon("clinic.txt", clinicWords)
	if err != nil {
		t.Fatal(err)
	}
	plain := search.New(clinicTools())
	clinic := search.NewWith(clinicTools(), search.Options{Lexicon: lx})
	for _, c := range []struct {
		query, want string
	}{
		{"list the patient's visits", "ehr_list_encounters"},
		{"write up amoxicillin for the patient", "ehr_prescribe_medication"},
		{"bill their insurance for today", "billing_create_claim"},
	} {
		// The tool a search finds first, confidently.
		top := func(ix *search.Index) string {
			if hits, _ := sure(ix.Search(bg, c.query, 1, nil)); len(hits) > 0 {
				return hits[0].Tool.Name
			}
			return ""
		}
		if got := top(clinic); got != c.want {
			t.Errorf("%q with the clinic's words: %q, want %s", c.query, got, c.want)
		}
		if got := top(plain); got == c.want {
			t.Errorf("%q finds %s without the clinic's words: the case tests nothing", c.query, got)
		}
	}
	// A service the file names, asked for, is one the catalog lacks.
	if hits, _ := sure(clinic.Search(bg, "Create an encounter in Epicor.", 3, nil)); len(hits) != 0 {
		t.Errorf("a request for Epicor, which the catalog lacks, found %v", hits[0].Tool.Name)
	}
}

// TestWordFileErrors: a bad word file is an error naming the file, the
// line and what is wrong; a good one loads from disk.
func TestWordFileErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[nonsense]\nfoo: bar\n", "clinic.txt:1: unknown section [nonsense]"},
		{"foo: bar\n", "clinic.txt:1: a line before any [section]"},
		{"[sets]\n# a comment\nnot-a-set: x\n", "clinic.txt:3: want name: words, with a set's name"},
		{"[synonyms]\nword: lonely\n", "clinic.txt:2: a group of synonyms needs two words or more"},
		{"[phrasal]\nwrite up\n", "clinic.txt:2: want pattern => what it means"},
		{"[phrasal]\n[nope] up => create\n", "clinic.txt:2: [nope]: no set of words so named"},
		{"[concepts]\nwhen: says x\n", "clinic.txt:2: when: before any concept: line"},
		{"[concepts]\nconcept: claim\nwhen: regex (\n", "clinic.txt:3: regex: error parsing regexp"},
		{"[concepts]\nconcept: claim\nwhen: smells x\n", `clinic.txt:3: "smells": no such condition`},
		{"[concepts]\nconcept: claim\n", `the concept "claim" has no when: line`},
		{"[rephrasings]\nrephrasing: x\nhas: y\n", `the rephrasing "x" has no match: line`},
		{"[hints]\nkind carrier-pigeon: bird\n", "clinic.txt:2: want contains PHRASE"},
	} {
		_, err := search.ParseLexicon("clinic.txt", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "clinic.txt")
	if err := os.WriteFile(p, []byte(clinicWords), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := search.LoadLexicon(p); err != nil {
		t.Errorf("LoadLexicon: %v", err)
	}
	if _, err := search.LoadLexicon(filepath.Join(dir, "absent.txt")); err == nil {
		t.Error("LoadLexicon of a file that is not there: no error")
	}
}
