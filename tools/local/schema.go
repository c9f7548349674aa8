package local

// SchemaJSON is the closed object schema of params, in header order: the
// input schema a header's @param lines declare (for other sources that
// read the same headers, such as tools/programs).
func SchemaJSON(params []Param) []byte { return schemaJSON(params) }
