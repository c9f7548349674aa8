// expect: ok:1
for (let i = 0; i < 1100; i++) console.log("<&>\u2028".repeat(200)); return 1
