// @description Triage the support inbox: file one ticket for each message not
//   triaged before, and return the new tickets. Remembers, between runs, which
//   messages it has triaged (state key "triaged", kept a week).
// @param folder string the folder to triage (default: inbox)
const triaged = (await state.get("triaged")) || [];
const messages = await tools.list_messages({ folder: args.folder || "inbox" });
const fresh = messages.filter((m) => !triaged.includes(m.id));
const tickets = [];
for (const m of fresh) {
  const c = await tools.get_customer({ customer_id: m.customer_id });
  const t = await tools.create_ticket({ message_id: m.id, customer_id: c.id, summary: m.subject,
    priority: c.plan === "enterprise" ? "high" : "normal" });
  tickets.push({ ticket: t.ticket_id, message: m.id });
}
await state.set("triaged", triaged.concat(fresh.map((m) => m.id)), { ttl_s: 7 * 24 * 3600 });
return { new_tickets: tickets, triaged_so_far: triaged.length + fresh.length };
