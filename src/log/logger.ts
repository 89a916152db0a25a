import { writeSync } from 'node:fs';
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import { createRequire } from 'node:module';
import type { prettyFactory } from 'pino-pretty';

/** The logging surface the use cases need; pino's Logger satisfies it, and so does `silentLogger`. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** `json`: one JSON object a line (log pipelines). `pretty`: one readable line (a person at a terminal). */
export type LogFormat = 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/**
 * Where finished log lines go: stderr, written synchronously (no line is lost at exit), unless a
 * live display takes them for a while (the progress bars print them above themselves, so a log
 * line never lands in the middle of a bar).
 */
export class LogOutput {
  #redirect: ((text: string) => void) | undefined;

  constructor(private readonly fd = 2) {}

  write(text: string): void {
    if (this.#redirect) this.#redirect(text);
    else writeSync(this.fd, text);
  }

  /** Sends lines to `to` until called again without it. */
  redirect(to: ((text: string) => void) | undefined): void {
    this.#redirect = to;
  }
}

export interface LoggerOptions {
  /** Default: pretty when stderr is a terminal, else json. */
  format?: LogFormat;
  output?: LogOutput;
  /** Colours in pretty lines (default: stderr is a terminal). */
  colorize?: boolean;
}

/** Pretty when stderr is a terminal, JSON lines otherwise; `--log-format` overrides. */
export function defaultLogFormat(isTTY = process.stderr.isTTY === true): LogFormat {
  return isTTY ? 'pretty' : 'json';
}

/**
 * Structured logs. Secrets never reach them: config holds keys as `Secret`, which serialises as ***,
 * and pino's redaction runs before either format is written. A `DestinationStream` (tests) takes
 * the escaped JSON lines as they are.
 */
export function createLogger(level: string, destination?: DestinationStream | LoggerOptions): PinoLogger {
  const options = { level, base: undefined, redact: { paths: ['apiKey', '*.apiKey', 'headers.apikey', '*.headers.apikey'], censor: '***' } };
  if (destination && 'write' in destination) return pino(options, escapeC1(destination));
  const opts = destination ?? {};
  const output = opts.output ?? new LogOutput();
  const format = opts.format ?? defaultLogFormat();
  const sink: DestinationStream = format === 'pretty' ? prettyLines(output, opts.colorize ?? process.stderr.isTTY === true) : { write: (line: string) => output.write(line) };
  return pino(options, escapeC1(sink));
}

const C1 = /[\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const hex = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * pino's JSON leaves DEL and C1 characters raw; a message quoting the service may carry the 8-bit
 * CSI (U+009B), which a terminal tailing the log acts on. They become \u escapes: the same JSON value.
 */
function escapeC1(stream: DestinationStream): DestinationStream {
  return { write: (line: string) => stream.write(line.replace(C1, hex)) };
}

/**
 * pino-pretty's formatter, called synchronously on each JSON line (no transport, no worker thread:
 * nothing is queued when the process exits). Its output is raw text, so every string of the record
 * is made inert first: control characters (ESC, CR, newlines, C1) a service put in a message show as
 * \u escapes instead of acting on the terminal; the only escapes left are pino-pretty's colours.
 */
function prettyLines(output: LogOutput, colorize: boolean): DestinationStream {
  // Loaded here, for pretty output only: json logs (the default off a terminal, every scheduled and
  // test run) do not spend the ~15 ms of CPU it takes.
  const { prettyFactory: factory } = createRequire(import.meta.url)('pino-pretty') as { prettyFactory: typeof prettyFactory };
  const pretty = factory({ colorize, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true });
  return {
    write(line: string) {
      let record: unknown;
      try {
        record = JSON.parse(line) as unknown;
      } catch {
        output.write(line);
        return;
      }
      output.write(pretty(inert(record)));
    },
  };
}

function inert(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(CONTROL, hex);
  if (Array.isArray(v)) return v.map(inert);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(CONTROL, hex), inert(x)]));
  return v;
}

export const silentLogger: Logger = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  child() {
    return silentLogger;
  },
};
