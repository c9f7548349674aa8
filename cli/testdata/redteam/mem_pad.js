// expect: E_MEMORY
return "".padStart(2 ** 30, "z").length
