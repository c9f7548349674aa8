// expect: E_OUTPUT_LIMIT
for (let i = 0; ; i++) console.error("line", i, "z".repeat(4096))
