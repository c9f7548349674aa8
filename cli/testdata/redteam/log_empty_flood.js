// expect: E_TIMEOUT|E_OUTPUT_LIMIT
for (;;) console.log()
