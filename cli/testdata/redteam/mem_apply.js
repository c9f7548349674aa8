// expect: E_MEMORY|E_GUEST_ERROR|E_STACK
return Math.max.apply(null, new Array(2 ** 26).fill(1))
