// expect: E_TIMEOUT|E_GUEST_ERROR
return /^(\w+\s?)*(?=\.)$/.test("an ordinary sentence that ends badly!".repeat(2))
