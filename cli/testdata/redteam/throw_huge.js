// expect: E_GUEST_ERROR
throw new RangeError("r".repeat(1 << 24))
