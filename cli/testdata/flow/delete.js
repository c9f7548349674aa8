// rule: no-untrusted-destruction
// An instruction in a message becomes a destructive call.
const msgs = await tools.list_messages({});
const done = [];
for (const m of msgs) {
  const cmd = /delete message (M-\d+)/i.exec(m.body);
  if (cmd) {
    await tools.delete_message({ id: cmd[1] });
    done.push(cmd[1]);
  }
}
return { deleted: done };
