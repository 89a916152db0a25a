import type { Agent } from 'undici';

/**
 * undici's Agent class, loaded without the rest of undici.
 *
 * `import('undici')` evaluates the package's whole index (fetch, WebSocket, cookies, caches, mock
 * agents): ~116 ms of CPU on this project's machines, where Agent and the pool under it take ~35 ms.
 * callsync only ever calls `dispatcher.dispatch` (see dispatch-get.ts), which Agent has on its own;
 * the index adds `request`, `stream` and the like, which nothing here uses. Every command that talks
 * to the service pays the load once per process: a 20-call sync went from ~470 to ~415 ms of CPU.
 *
 * The file path is undici's internal layout (the package has no `exports` map, so Node allows it).
 * Should a later undici move the file, the whole package is loaded instead: slower, still correct.
 * test/unit/http-agent.test.ts checks that the path still gives undici's own Agent.
 */
export async function loadHttpAgent(): Promise<typeof Agent> {
  try {
    return (await import('undici/lib/dispatcher/agent.js')).default;
  } catch {
    return (await import('undici')).Agent;
  }
}
