/**
 * Ends stdio upstream children when this process exits, whatever the way
 * out: a clean `server.close()` ends them itself, but `process.exit()` (a
 * second signal while draining, a fatal error) skips it, and a child whose
 * stdin closed may go on running, adopted by init. The `exit` event still
 * runs synchronously then, so each live child gets SIGTERM there.
 *
 * Process-wide on purpose: the process is one, whatever number of servers it holds.
 */
const live = new Set<() => number | undefined>();
let installed = false;

function endAll(): void {
  for (const pidOf of live) {
    const pid = pidOf();
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
  live.clear();
}

/** Registers a child (by a function that reads its pid once it is spawned); returns a function that forgets it. */
export function endOnExit(pidOf: () => number | undefined): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', endAll);
  }
  live.add(pidOf);
  return () => void live.delete(pidOf);
}
