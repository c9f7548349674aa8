package jsonscan_test

import (
	"fmt"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// Check a text, then walk an object's members in place.
func Example() {
	b := []byte(`{"page": 2, "rows": [{"id": 1}, {"id": 2}], "bad": "x\q"}`)
	if end, at, msg := jsonscan.Value(b, 0, 64); end < 0 {
		fmt.Printf("not JSON at offset %d: %s\n", at, msg)
	}

	b = []byte(`{"page": 2, "rows": [{"id": 1}, {"id": 2}]}`)
	it := jsonscan.Elems(b, 0)
	for {
		ks, ke, vs, ve, ok := it.Member()
		if !ok {
			break
		}
		fmt.Printf("%s = %s\n", b[ks:ke], b[vs:ve])
		if b[vs] == '[' {
			fmt.Println("  items:", jsonscan.Count(b, vs))
		}
	}
	fmt.Println("depth:", jsonscan.Depth(b))
	// Output:
	// not JSON at offset 53: invalid escape in string
	// "page" = 2
	// "rows" = [{"id": 1}, {"id": 2}]
	//   items: 2
	// depth: 3
}
