// expect: ok:1
for (let i = 0; i < 65; i++) console.log("x".repeat(1023)); return 1
