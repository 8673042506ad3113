/**
 * Ends stdio upstream children when this process exits, whatever the way
 * out: a clean `server.close()` ends them itself, but `process.exit()` (a
 * second signal while draining, a fatal error) skips it, and a child whose
 * stdin closed may go on running, adopted by init. The `exit` event still
 * runs synchronously then, so each live child gets SIGTERM there.
 *
 * That SIGTERM is a last resort: the process is gone before the child acts
 * on it. A process that chooses to exit (the second signal) calls
 * `endStdioChildren` first, which kills each child and waits until it is reaped.
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

/** How often `endStdioChildren` looks whether a killed child is reaped. */
const REAP_POLL_MS = 10;

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: reaped. EPERM: the pid was reused by another user's process; ours is gone either way.
    return false;
  }
}

/**
 * Kills every live stdio child (SIGKILL: the process is leaving and will not
 * wait for a graceful end) and resolves once each is reaped (its pid is gone),
 * or after `limitMs` for a child that will not go. For a process about to
 * call `process.exit()`: nothing it started outlives it.
 */
export async function endStdioChildren(limitMs = 2_000): Promise<void> {
  const pids: number[] = [];
  for (const pidOf of live) {
    const pid = pidOf();
    if (pid === undefined) continue;
    pids.push(pid);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  live.clear();
  // Node reaps its children from its event loop (SIGCHLD); a reaped pid no longer exists.
  const until = Date.now() + limitMs;
  while (pids.some(exists) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, REAP_POLL_MS));
  }
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
