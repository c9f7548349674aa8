package wasm

import "os"

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o600) }
func readFile(path string) ([]byte, error)  { return os.ReadFile(path) }
