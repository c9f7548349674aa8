// expect: ok
return "x".repeat(262144 - 2)
