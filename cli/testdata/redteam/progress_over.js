// expect: E_OUTPUT_LIMIT
progress({ kept: true }); progress("x".repeat(300000)); return 1
