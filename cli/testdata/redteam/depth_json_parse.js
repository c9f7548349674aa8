// expect: E_GUEST_ERROR
return JSON.parse("[".repeat(200000) + "]".repeat(200000))
