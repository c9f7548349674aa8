// expect: E_MEMORY
return "ab".repeat(2 ** 29).length
