// expect: E_OUTPUT_LIMIT|E_MEMORY
return Array.from({ length: 100000 }, (_, i) => ({ i, pad: "p".repeat(64) }))
