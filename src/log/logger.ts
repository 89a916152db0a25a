import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';

/** The logging surface the use cases need; pino's Logger satisfies it, and so does `silentLogger`. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** Structured JSON logs. Secrets never reach them: config holds keys as `Secret`, which serialises as ***. */
export function createLogger(level: string, destination?: DestinationStream): PinoLogger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['apiKey', '*.apiKey', 'headers.apikey', '*.headers.apikey'], censor: '***' },
    },
    destination ?? escapeC1(pino.destination({ dest: 2, sync: true })),
  );
}

/**
 * pino's JSON leaves DEL and C1 characters raw; a message quoting the service may carry the 8-bit
 * CSI (U+009B), which a terminal tailing the log acts on. They become \u escapes: the same JSON value.
 */
function escapeC1(stream: DestinationStream): DestinationStream {
  // eslint-disable-next-line no-control-regex
  const c1 = /[\u007f-\u009f]/g;
  return { write: (line: string) => stream.write(line.replace(c1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)) };
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
