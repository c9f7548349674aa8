// Fan-out: 1,000 trivial tool calls, awaited in parallel batches of 50.
// The standard fan-out workload (docs/workloads.md, "Standard workloads"), for the
// tool ping({n}) → n + 1. Result: 500500.
let total = 0;
for (let b = 0; b < 20; b++) {
  const batch = [];
  for (let i = 0; i < 50; i++) batch.push(tools.ping({ n: b * 50 + i }));
  const rs = await Promise.all(batch);
  for (const r of rs) total += r;
}
return total;
