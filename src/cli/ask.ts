import { createInterface } from 'node:readline/promises';
import { ConfigError } from '../config/errors.js';

/**
 * Reads answers line by line from the terminal. The line iterator buffers what was typed (or
 * pasted) ahead of a question; rl.question would drop such lines.
 */
export async function askLines<T>(fn: (ask: (question: string) => Promise<string>) => Promise<T>): Promise<T> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  try {
    return await fn(async (question) => {
      process.stderr.write(question);
      const next = await lines.next();
      if (next.done) throw new ConfigError('no answer (end of input); nothing was done');
      return String(next.value);
    });
  } finally {
    rl.close();
  }
}
