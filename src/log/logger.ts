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
    destination ?? pino.destination({ dest: 2, sync: true }),
  );
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
