/**
 * Whether a process of this machine is alive: signal 0 checks without signalling; EPERM means it is
 * alive but another user's. Used to tell a lease or a run left by a dead process of this host.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
