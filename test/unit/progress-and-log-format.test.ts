import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressDisplay, formatRetryLine, retryWarner } from '../../src/cli/progress.js';
import { createLogger, LogOutput } from '../../src/log/logger.js';
import type { AppRetryEvent } from '../../src/sync/sync-app.js';

const event = (over: Partial<AppRetryEvent> = {}): AppRetryEvent => ({
  appId: '1a2b', region: 'us', host: '1a2b.call-us.cometchat.io', what: 'List Calls page 3', attempt: 2, maxAttempts: 6, waitMs: 4_000, reason: 'connection refused', kind: 'transient', ...over,
});

/** A writable that says it is a terminal, keeping what is written. */
function fakeTty(): Writable & { isTTY: boolean; columns: number; text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  }) as Writable & { isTTY: boolean; columns: number; text: () => string; cursorTo: () => boolean; moveCursor: () => boolean; clearLine: () => boolean; clearScreenDown: () => boolean };
  Object.assign(w, { isTTY: true, columns: 200, rows: 40, cursorTo: () => true, moveCursor: () => true, clearLine: () => true, clearScreenDown: () => true, text: () => chunks.join('') });
  return w;
}

// eslint-disable-next-line no-control-regex
/** The text, a line per cursor return (ESC[1G moves to the line's start), escape sequences removed. */
const stripAnsi = (s: string): string => s.replace(/\u001b\[1G|\r/g, '\n').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');

function collectingLogger(format: 'json' | 'pretty', level = 'info') {
  const lines: string[] = [];
  const output = new LogOutput();
  output.redirect((t) => lines.push(t));
  return { log: createLogger(level, { format, output, colorize: false }), lines };
}

describe('the retry line', () => {
  it('names the host, the attempt, the wait and the reason, on one inert line', () => {
    expect(formatRetryLine(event())).toBe('waiting for 1a2b.call-us.cometchat.io: retry 2/6 in 4 s (connection refused)');
    expect(formatRetryLine(event({ waitMs: 250, attempt: 3, reason: 'HTTP 503' }))).toBe('waiting for 1a2b.call-us.cometchat.io: retry 3/6 in 250 ms (HTTP 503)');
    expect(formatRetryLine(event({ waitMs: 12_400 }))).toContain('in 12 s');
    const hostile = formatRetryLine(event({ reason: 'HTTP 503 \u001b[2J\u009b31m\nnext' }));
    expect(hostile).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('without a live display, is logged as a warning at most once per interval and app, counting the rest', () => {
    const { log, lines } = collectingLogger('json');
    let now = 0;
    const warn = retryWarner(log, 10_000, () => now);
    for (let i = 0; i < 5; i++) warn(event({ attempt: 2 + i }));
    warn(event({ appId: 'other' }));
    expect(lines).toHaveLength(2);
    now = 10_000;
    warn(event({ attempt: 6 }));
    expect(lines).toHaveLength(3);
    const last = JSON.parse(lines[2]!) as Record<string, unknown>;
    expect(last).toMatchObject({ level: 40, app: '1a2b', host: '1a2b.call-us.cometchat.io', attempt: 6, reason: 'connection refused', retriesNotLogged: 4 });
    expect(String(last.msg)).toContain('waiting for 1a2b.call-us.cometchat.io: retry 6/6 in 4 s (connection refused)');
  });
});

describe('the progress display on a terminal', () => {
  it('shows what a request waits for before any page arrived, and prints log lines above the bars', () => {
    const tty = fakeTty();
    const output = new LogOutput();
    const display = createProgressDisplay(tty as unknown as NodeJS.WriteStream, output)!;
    expect(display).toBeDefined();
    display.retry(event());
    output.write('a log line\n');
    display.update({ appId: '1a2b', region: 'us', pages: 1, callsSeen: 10, detailFetches: 0, listedTotal: 40 });
    display.stop();
    const lines = stripAnsi(tty.text()).split("\n");
    expect(lines.some((l) => l.includes('1a2b (us)') && l.includes('waiting for 1a2b.call-us.cometchat.io: retry 2/6 in 4 s (connection refused)'))).toBe(true);
    // The log line is a line of its own, never inside a bar.
    expect(lines.filter((l) => l.includes('a log line'))).toEqual(['a log line']);
    // After the next progress the bar no longer says it waits.
    expect(lines.filter((l) => l.includes('10/40 calls')).at(-1)).not.toContain('waiting');
    // Stopped: log lines go to stderr again, not into the display.
    output.redirect((t) => expect(t).toBe('after\n'));
    output.write('after\n');
  });

  it('is not shown when the stream is not a terminal', () => {
    const w = new Writable({ write: (_c, _e, cb) => cb() });
    expect(createProgressDisplay(w as unknown as NodeJS.WriteStream)).toBeUndefined();
  });
});

describe('log formats', () => {
  const hostile = { apiKey: 'sk-secret-123', note: 'a\u001b[2Jb\u009bc' };

  it('pretty: one readable line, key redacted, control characters inert', () => {
    const { log, lines } = collectingLogger('pretty');
    log.warn(hostile, 'hello\nworld \u009b31m');
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatch(/WARN: hello\\u000aworld \\u009b31m/);
    expect(line.trimEnd().split('\n')).toHaveLength(1);
    expect(line).not.toContain('sk-secret-123');
    expect(line).toContain('***');
    expect(line.trimEnd()).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).not.toContain('{"level"');
  });

  it('json: one JSON object a line, key redacted, C1 escaped', () => {
    const { log, lines } = collectingLogger('json');
    log.warn(hostile, 'x\u009by');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/[\u007f-\u009f]/);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: 'x\u009by', apiKey: '***', note: 'a\u001b[2Jb\u009bc' });
  });
});
