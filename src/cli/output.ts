import Table from 'cli-table3';
import { stringify } from 'csv-stringify/sync';
import { ConfigError } from '../config/errors.js';
import { writeFileAtomic } from '../export/write-file.js';

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

export function parseFormat(value: string, allowed: readonly OutputFormat[]): OutputFormat {
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(`--format ${JSON.stringify(value)}: use one of ${allowed.join(', ')}`);
  return value as OutputFormat;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(4);
  if (Buffer.isBuffer(v)) return `<${v.length} bytes>`;
  return String(v);
}

/** A table cell on a terminal: a service-controlled value can neither move the cursor nor break the row. */
const tableCell = (v: unknown): string => sanitizeForTerminal(cellText(v), { singleLine: true });

/** Columns and rows as a terminal table, RFC 4180 CSV, or JSON objects. */
export function renderGrid(columns: readonly string[], rows: readonly (readonly unknown[])[], format: OutputFormat): string {
  if (format === 'json') {
    const objects = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, Buffer.isBuffer(r[i]) ? (r[i] as Buffer).toString('base64') : (r[i] ?? null)])));
    return `${JSON.stringify(objects, null, 2)}\n`;
  }
  if (format === 'csv') return stringify(rows.map((r) => r.map(cellText)), { header: true, columns: [...columns], record_delimiter: '\r\n' });
  const table = new Table({ head: [...columns], style: { head: [], border: [] } });
  for (const r of rows) table.push(r.map(tableCell));
  return `${table.toString()}\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
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
