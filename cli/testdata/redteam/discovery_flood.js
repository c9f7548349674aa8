// expect: ok:["ok","E_TOOL_CALL_LIMIT"]
const ps = []; for (let i = 0; i < 3000; i++) ps.push(tools.$search("expense " + i).then(() => "ok", e => e.code)); return [...new Set(await Promise.all(ps))]
