package search

// Hooks for the external tests (compiled only with them).

// Typos returns the catalog's words one edit from w (see typos).
func (ix *Index) Typos(w string) []string { return ix.typos(w) }
