// expect: E_OUTPUT_LIMIT
return "x".repeat(8 * 1024 * 1024 - 1)
