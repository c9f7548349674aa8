// expect: E_MEMORY|E_GUEST_ERROR
return new Float64Array(2 ** 30).length
