// expect: ok
for (let i = 0; i < 1100; i++) console.log("<".repeat(1000)); progress("&".repeat(250000)); return "<".repeat(8 * 1024 * 1024 - 2)
