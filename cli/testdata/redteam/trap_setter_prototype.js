// expect: ok:true
Object.defineProperty(Object.prototype, "level", { set(v) { for (;;) {} }, configurable: true });
const b = await tools.get_budget_by_level({ level: "L2" }); return b.travel_limit === 3500
