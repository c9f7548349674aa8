// expect: E_OUTPUT_LIMIT
console.log("y".repeat(50 << 20)); return 1
