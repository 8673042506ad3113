await import('@modelcontextprotocol/sdk/server/mcp.js');
await import('zod');
const u0 = process.cpuUsage();
const t0 = performance.now();
if (process.env.WHAT) await import(process.env.WHAT);
const u = process.cpuUsage(u0);
console.log(Math.round((u.user + u.system) / 100) / 10, Math.round((performance.now() - t0) * 10) / 10);
