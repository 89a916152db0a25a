import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_FOR_CODE } from '../../src/cli/exit-codes.js';
import { CallsyncError, ConfigError, ERROR_CODES } from '../../src/config/errors.js';
import { ApiError, type ApiErrorKind } from '../../src/source/errors.js';
import { REPO } from '../helpers/cli.js';

const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** The README's "Exit codes" table as error code → exit code, from its last column. */
function readmeExitTable(): Map<string, number> {
  const start = README.indexOf('### Exit codes\n');
  const section = README.slice(start, README.indexOf('\n### ', start + 1));
  const table = new Map<string, number>();
  for (const row of section.split('\n')) {
    const m = /^\| `(\d)` \|.*\|([^|]*)\|\s*$/.exec(row);
    if (!m) continue;
    for (const [, code] of m[2]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) {
      expect(table.has(code!), `${code} is listed twice in the README's exit codes`).toBe(false);
      table.set(code!, Number(m[1]));
    }
  }
  return table;
}

describe('one error vocabulary, one exit table', () => {
  it('every error code has an exit code, and the table holds nothing else', () => {
    expect(Object.keys(EXIT_FOR_CODE).sort()).toEqual([...ERROR_CODES].sort());
    const exits = new Set<number>(Object.values(EXIT));
    for (const code of ERROR_CODES) expect(exits.has(EXIT_FOR_CODE[code]), code).toBe(true);
  });

  it('codes are unique UPPER_SNAKE names', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });

  it('the README lists every code at the exit code the table gives it', () => {
    const documented = readmeExitTable();
    const expected = new Map<string, number>(Object.entries(EXIT_FOR_CODE));
    expect(Object.fromEntries([...documented].sort())).toEqual(Object.fromEntries([...expected].sort()));
  });

  it('an ApiError carries our code for its kind and the service\'s code apart', () => {
    const kinds: [ApiErrorKind, string][] = [['auth', 'API_AUTH'], ['account', 'API_ACCOUNT'], ['not_found', 'API_NOT_FOUND'], ['rate_limited', 'API_RATE_LIMITED'], ['transient', 'API_TRANSIENT'], ['client', 'API_CLIENT'], ['aborted', 'API_ABORTED']];
    for (const [kind, code] of kinds) {
      const err = new ApiError('x', kind, 'AUTH_ERR_APIKEY_NOT_FOUND', 401, 1);
      expect(err).toBeInstanceOf(CallsyncError);
      expect(err.code).toBe(code);
      expect(err.serviceCode).toBe('AUTH_ERR_APIKEY_NOT_FOUND');
    }
  });

  it('a ConfigError prints each problem as its own line; another error its message and hint on one', () => {
    expect(new ConfigError(['a: wrong', 'b: missing']).lines()).toEqual(['a: wrong', 'b: missing']);
    expect(new CallsyncError('DB_LOCKED', 'the database is locked', 'try again').lines()).toEqual(['the database is locked; try again']);
    expect(new CallsyncError('MIGRATION_FAILED', 'migration x failed').lines()).toEqual(['migration x failed']);
  });
});
