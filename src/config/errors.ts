/**
 * A configuration or argument problem, stated in one line with what to do about it. A config file
 * with several problems carries them all (`problems`, one line each), so a user fixes them in one
 * pass instead of one run per mistake; `message` is those lines joined by line breaks.
 */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly problems: readonly string[];
  constructor(message: string | readonly string[]) {
    const lines = typeof message === 'string' ? [message] : [...message];
    super(lines.join('\n'));
    this.name = 'ConfigError';
    this.problems = Object.freeze(lines);
  }
}
