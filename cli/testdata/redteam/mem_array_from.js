// expect: E_MEMORY
return Array.from({ length: 2 ** 30 }, () => 0).length
