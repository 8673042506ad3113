// Starts the mesh with the loop guard, makes the call that would go round
// forever, prints what comes back, and stops.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startMesh, stopMesh } from './mesh.js';

const services = await startMesh({ guard: true });
for (const service of services) {
  for (const skipped of service.skipped)
    process.stdout.write(`service ${service.name} skipped ${skipped.name}: ${skipped.reason}\n`);
}
const client = new Client({ name: 'loop-mesh-demo', version: '1.0.0' });
const [first] = services;
if (first === undefined) throw new Error('the mesh started no service');
await client.connect(new StreamableHTTPClientTransport(first.url));
const result = await client.callTool({ name: 'a.lookup', arguments: { key: 'answer' } });
const text = (result.content as { type: string; text?: string }[]).map((block) => block.text ?? '').join('\n');
process.stdout.write(`a.lookup answered (isError: ${String(result.isError)}):\n${text}\n`);
await client.close();
await stopMesh(services);
