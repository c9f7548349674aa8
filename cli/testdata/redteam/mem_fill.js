// expect: E_MEMORY
return new Array(2 ** 27).fill({}).length
