import { describe, expect, it } from 'vitest';
import { loadHttpAgent } from '../../src/source/http-agent.js';

describe('loadHttpAgent', () => {
  it("loads undici's own Agent by its file, without the package's index", async () => {
    // If an undici upgrade moves the file, loadHttpAgent still works (it falls back to the whole
    // package) but every command that talks to the service starts ~80 ms slower: this fails instead.
    const byPath = (await import('undici/lib/dispatcher/agent.js')).default;
    const { Agent } = await import('undici');
    expect(byPath).toBe(Agent);
    expect(await loadHttpAgent()).toBe(Agent);
  });
});
