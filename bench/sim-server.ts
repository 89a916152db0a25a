/**
 * The simulator in its own process, for the benchmark: the sync and the bound client then share
 * the machine's two cores with it as they would with a remote service, and its memory is not counted.
 *
 *   node --import tsx bench/sim-server.ts '<SimulatorOptions as JSON>'
 *
 * Prints one JSON line `{"url": …}` once listening, then reads one JSON command per line on stdin
 * and answers each with one JSON line on stdout, `{"id", "ok", "result"|"error"}`:
 *   {"id":1,"cmd":"baseUrls","appId":"a"}     {"id":2,"cmd":"stats","appId":"a"}
 *   {"id":3,"cmd":"resetStats"}               {"id":4,"cmd":"advance","appId":"a","opts":{"newCalls":500}}
 *   {"id":5,"cmd":"setFaults","faults":{…}}   {"id":6,"cmd":"truthCount","appId":"a"}
 *   {"id":7,"cmd":"memory"}                   {"id":8,"cmd":"close"}
 * stdin closing also stops it.
 */
import { createInterface } from 'node:readline';
import { startSimulator, type AdvanceOptions, type FaultProfile, type SimulatorOptions } from '../src/simulator/index.js';

export interface SimCommand {
  id: number;
  cmd: 'baseUrls' | 'stats' | 'resetStats' | 'advance' | 'setFaults' | 'truthCount' | 'memory' | 'close';
  appId?: string;
  opts?: AdvanceOptions;
  faults?: FaultProfile;
}

const options = JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions;
const sim = await startSimulator({ ...options, host: '127.0.0.1', port: options.port ?? 0 });
process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`);

let closing = false;
const stop = async (): Promise<void> => {
  if (closing) return;
  closing = true;
  await sim.close();
  process.exit(0);
};

function run(c: SimCommand): unknown {
  const appId = c.appId ?? '';
  switch (c.cmd) {
    case 'baseUrls':
      return sim.baseUrls(appId);
    case 'stats':
      return sim.stats(c.appId);
    case 'resetStats':
      sim.resetStats();
      return null;
    case 'advance': {
      const r = sim.advance(appId, c.opts ?? {});
      return { ended: r.ended.length, recorded: r.recorded.length, added: r.added.length };
    }
    case 'setFaults':
      sim.setFaults(c.faults ?? {});
      return null;
    case 'truthCount': {
      let n = 0;
      for (const _ of sim.truthCalls(appId)) n++;
      return n;
    }
    case 'memory': {
      const cpu = process.cpuUsage();
      return { rssBytes: process.memoryUsage.rss(), cpuMs: (cpu.user + cpu.system) / 1000 };
    }
    case 'close':
      return null;
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  let c: SimCommand;
  try {
    c = JSON.parse(line) as SimCommand;
  } catch {
    process.stdout.write(`${JSON.stringify({ id: -1, ok: false, error: 'not JSON' })}\n`);
    return;
  }
  try {
    const result = run(c);
    process.stdout.write(`${JSON.stringify({ id: c.id, ok: true, result })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ id: c.id, ok: false, error: (err as Error).message })}\n`);
  }
  if (c.cmd === 'close') void stop();
});
lines.on('close', () => void stop());
