package search

// Config is a search's configuration as an operator gives it (in
// sandcall.yaml). The zero value is the built-in ranking, with no
// embeddings.
type Config struct {
	// WordFiles are word files added to the built-in word knowledge, in
	// order (docs/search.md says their format); none by default.
	WordFiles []string
	// Embeddings, when its URL is set, reorders the lexical ranking's
	// best tools with an embeddings model (see Embeddings); off by
	// default.
	Embeddings EmbeddingsConfig
}

// Options loads what c names — its word files, its embeddings reranker —
// into the options of an index (NewWith, NewLiveWith), or returns an
// error that says which file or setting is wrong.
func (c Config) Options() (Options, error) {
	var o Options
	if len(c.WordFiles) > 0 {
		lx, err := LoadLexicon(c.WordFiles...)
		if err != nil {
			return o, err
		}
		o.Lexicon = lx
	}
	if c.Embeddings.URL != "" {
		e, err := NewEmbeddings(c.Embeddings)
		if err != nil {
			return o, err
		}
		o.Reranker = e
	}
	return o, nil
}
