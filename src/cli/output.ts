import { randomBytes } from 'node:crypto';
import type { Env } from '../config/load.js';
import Table from 'cli-table3';
import { stringify } from 'csv-stringify/sync';
import { ConfigError } from '../config/errors.js';
import { RawJson } from '../store/destinations/contract.js';
import { writeFileAtomic } from '../export/write-file.js';
import { environment } from './setup.js';

export type OutputFormat = 'table' | 'csv' | 'json';

// Terminal control sequences: CSI (ESC [ … final byte), OSC/DCS/APC/PM/SOS strings (up to BEL or
// ESC \, or to the end when unterminated), any other ESC + one byte, and the 8-bit C1 forms.
// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]?|\u001b[\]PX^_][^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[\s\S]?|\u009b[0-?]*[ -/]*[@-~]?|[\u0090\u009d\u009e\u009f][^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?/g;
// C0 controls but tab and line feed, a CR not ending a CRLF, DEL, and C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g;

/**
 * Text the service (or a database it filled) controls, made safe to print: escape sequences and
 * control characters are removed, because an error message carrying ESC [ … or a bare CR can
 * rewrite what the terminal shows (a fake "All apps synced OK"). Line breaks are kept unless
 * `singleLine`, where a line break inside a value would forge a line of ours: it becomes a space.
 */
export function sanitizeForTerminal(text: string, opts: { singleLine?: boolean } = {}): string {
  const clean = text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
  return opts.singleLine ? clean.replace(/\r?\n|\t/g, ' ') : clean;
}

/** One `callsync: warning: …` line on stderr, made safe for the terminal. */
export function warnLine(text: string): void {
  console.error(sanitizeForTerminal(`callsync: warning: ${text}`, { singleLine: true }));
}

export function parseFormat(value: string, allowed: readonly OutputFormat[]): OutputFormat {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`--format ${JSON.stringify(value)}: use one of ${allowed.join(', ')}`);
  return value as OutputFormat;
}

/**
 * A double that is a whole number past 2^53 no longer states its digits: written with its exponent,
 * so that no reader takes it for an exact integer (`9223372036854775807 + 1`, a REAL, printed as
 * 9223372036854776000 beside exact bigints: probe round 22).
 */
function numberText(v: number): string {
  return inexactWhole(v) ? v.toExponential() : String(v);
}

const inexactWhole = (v: number): boolean => Number.isInteger(v) && !Number.isSafeInteger(v);

/** A table cell's text: numbers to 4 places and a BLOB's size, for reading on a terminal. */
function cellText(v: unknown): string {
  if (typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v)) return v.toFixed(4);
  if (Buffer.isBuffer(v)) return `<${v.length} bytes>`;
  return csvText(v);
}

/**
 * A CSV field: the value whole, as JSON gives it (numbers as they are, a BLOB in base64, a json
 * value or an array as its JSON text). The table's 4 places cut 0.123456789 to 0.1235 and a BLOB to
 * "<3 bytes>" in files meant for further work (probe round 21); an object was "[object Object]".
 */
function csvText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (v instanceof RawJson) return v.text;
  if (typeof v === 'number') return numberText(v);
  if (typeof v === 'object') return jsonText(v);
  return String(v);
}

/**
 * JSON.stringify that writes each value as exactly as it is known: a bigint as its digits, a RawJson
 * as its text, a whole double past 2^53 with its exponent (numberText), NaN and ±Infinity as the
 * strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers; null would read as SQL NULL).
 * JSON.stringify throws on a bigint and JSON.rawJSON needs Node 22: each such value goes through as
 * a string marked with a nonce and its index, and the marked strings, quotes and all, become the text.
 */
function jsonText(value: unknown, indent?: number): string {
  const raw: string[] = [];
  let nonce: string | undefined;
  const mark = (text: string): string => {
    nonce ??= randomBytes(8).toString('hex');
    raw.push(text);
    return `${nonce}:${raw.length - 1}`;
  };
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return mark(v.toString());
    if (v instanceof RawJson) return mark(v.text);
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return String(v);
      if (inexactWhole(v)) return mark(numberText(v));
    }
    return v;
  }, indent);
  return nonce === undefined ? text : text.replace(new RegExp(`"${nonce}:(\\d+)"`, 'g'), (_m, k: string) => raw[Number(k)]!);
}

/** A table cell on a terminal: a service-controlled value can neither move the cursor nor break the row. */
const tableCell = (v: unknown): string => sanitizeForTerminal(cellText(v), { singleLine: true });

/**
 * The width a table on stdout must fit: the terminal's when stdout is one, else $COLUMNS, else 100
 * (a pipe into `less` or a file read in an editor).
 */
export function outputWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: Env = environment()): number {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns;
  const cols = Number(env.COLUMNS);
  return Number.isInteger(cols) && cols >= 20 ? cols : 100;
}

/**
 * Columns and rows as a terminal table, RFC 4180 CSV, or JSON objects. A table given `maxWidth`
 * fits it: the widest columns are cut with an ellipsis first (a run's error, a call's issue codes),
 * and when even that cannot fit, each row is printed as a record of `column | value` lines, as
 * psql's expanded display does. The full values stay in CSV and JSON.
 */
export function renderGrid(columns: readonly string[], rows: readonly (readonly unknown[])[], format: OutputFormat, opts: { maxWidth?: number } = {}): string {
  if (format === 'json') {
    const objects = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, Buffer.isBuffer(r[i]) ? (r[i] as Buffer).toString('base64') : (r[i] ?? null)])));
    return `${jsonText(objects, 2)}\n`;
  }
  // A lone CR or LF is quoted too: csv-stringify quotes only the whole record delimiter, and a
  // reader took an unquoted LF for the end of the row (as export/write-table.ts says).
  if (format === 'csv') return stringify(rows.map((r) => r.map(csvText)), { header: true, columns: [...columns], record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
  if (rows.length > MAX_TABLE_ROWS) throw tooManyForTable();
  const cells = rows.map((r) => r.map(tableCell));
  const footer = `(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
  return `${opts.maxWidth === undefined ? table(columns, cells) : fitted(columns, cells, opts.maxWidth)}\n${footer}`;
}

/**
 * Rows a table is drawn with at most: cli-table3 passes every row as one call's arguments, and past
 * ~150,000 that overflowed the stack (exit 3, a stack trace and no output: probe round 21). A table
 * that long is read by no one; CSV and JSON have no such bound.
 */
export const MAX_TABLE_ROWS = 50_000;

export function tooManyForTable(): ConfigError {
  return new ConfigError(`--format table shows at most ${MAX_TABLE_ROWS.toLocaleString('en-US')} rows and this result has more; use --format csv or json (no bound), or a smaller --limit`);
}

function table(columns: readonly string[], cells: readonly string[][], colWidths?: number[]): string {
  const t = new Table({ head: [...columns], style: { head: [], border: [] }, ...(colWidths ? { colWidths } : {}) });
  for (const r of cells) t.push(r);
  return t.toString();
}

/** Display width, one column per code point (sanitised text: no escapes, no line breaks). */
const width = (s: string): number => [...s].length;

/** Narrowest a cut column gets: its header, or 8, whichever is less, plus its padding. */
const MIN_CELL = 8;

function fitted(columns: readonly string[], cells: readonly string[][], maxWidth: number): string {
  const natural = columns.map((c, i) => Math.max(width(c), ...cells.map((r) => width(r[i] ?? ''))) + 2);
  const budget = maxWidth - (columns.length + 1); // the borders
  if (natural.reduce((a, b) => a + b, 0) <= budget) return table(columns, cells);
  const floor = natural.map((n, i) => Math.min(n, Math.max(width(columns[i]!), MIN_CELL) + 2));
  if (floor.reduce((a, b) => a + b, 0) > budget) return expanded(columns, cells, maxWidth);
  // The largest cap that fits: columns wider than it are cut to it (cli-table3 adds the ellipsis).
  let cap = Math.max(...floor);
  const total = (c: number): number => natural.reduce((s, n, i) => s + Math.max(floor[i]!, Math.min(n, c)), 0);
  while (total(cap + 1) <= budget) cap += 1;
  return table(columns, cells, natural.map((n, i) => Math.max(floor[i]!, Math.min(n, cap))));
}

/** Each row as `column | value` lines, long values wrapped at spaces to the width. */
function expanded(columns: readonly string[], cells: readonly string[][], maxWidth: number): string {
  const keyWidth = Math.max(...columns.map(width));
  const valueWidth = Math.max(10, maxWidth - keyWidth - 3);
  const blocks = cells.map((r, n) => {
    const title = `-[ row ${n + 1} ]`;
    const lines = [`${title}${'-'.repeat(Math.max(0, Math.min(maxWidth, keyWidth + 3 + valueWidth) - width(title)))}`];
    columns.forEach((c, i) => {
      wrap(r[i] ?? '', valueWidth).forEach((part, k) => lines.push(`${(k === 0 ? c : '').padEnd(keyWidth)} | ${part}`.trimEnd()));
    });
    return lines.join('\n');
  });
  return blocks.join('\n');
}

/** A paragraph of ours wrapped at spaces to `maxWidth` columns (each line ends with a newline). */
export function wrapParagraph(text: string, maxWidth: number): string {
  return text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1).map((l) => wrap(l, maxWidth).join('\n')).join('\n') + '\n';
}

/** Splits text into lines of at most `w` code points, at spaces where it can. */
function wrap(text: string, w: number): string[] {
  const out: string[] = [];
  let rest = [...text];
  while (rest.length > w) {
    const head = rest.slice(0, w + 1);
    const space = head.lastIndexOf(' ');
    const cut = space > 0 ? space : w;
    out.push(rest.slice(0, cut).join('').trimEnd());
    rest = rest.slice(space > 0 ? cut + 1 : cut);
  }
  out.push(rest.join(''));
  return out;
}

/** Writes `text` to `path` atomically (temp file + rename: never a half-written export), or stdout. */
export async function writeOutput(path: string | undefined, text: string): Promise<void> {
  if (!path || path === '-') {
    process.stdout.write(text);
    return;
  }
  try {
    await writeFileAtomic(path, text);
  } catch (err) {
    throw new ConfigError(`--out ${path}: cannot write (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check the folder exists and is writable`);
  }
}
