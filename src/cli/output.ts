import Table from 'cli-table3';
import { stringify } from 'csv-stringify/sync';
import { ConfigError } from '../config/errors.js';
import { writeFileAtomic } from '../export/write-file.js';

export type OutputFormat = 'table' | 'csv' | 'json';

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

/** Columns and rows as a terminal table, RFC 4180 CSV, or JSON objects. */
export function renderGrid(columns: readonly string[], rows: readonly (readonly unknown[])[], format: OutputFormat): string {
  if (format === 'json') {
    const objects = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, Buffer.isBuffer(r[i]) ? (r[i] as Buffer).toString('base64') : (r[i] ?? null)])));
    return `${JSON.stringify(objects, null, 2)}\n`;
  }
  if (format === 'csv') return stringify(rows.map((r) => r.map(cellText)), { header: true, columns: [...columns], record_delimiter: '\r\n' });
  const table = new Table({ head: [...columns], style: { head: [], border: [] } });
  for (const r of rows) table.push(r.map(cellText));
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
