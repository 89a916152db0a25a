import { stringify } from 'csv-stringify/sync';
import { MINUTE_DECIMALS, roundMinutes } from './billing.js';

export type Cell = string | number | null | undefined;

/**
 * Formats rows as RFC 4180 CSV (csv-stringify: quoting of commas, quotes and newlines) with the
 * given header, or as JSON. Columns named `*_minutes` always get MINUTE_DECIMALS places (other
 * numbers print as they are), so the same database always gives byte-identical output.
 */
export function formatRows<T extends object>(rows: readonly T[], columns: readonly (keyof T & string)[], format: 'csv' | 'json'): string {
  if (format === 'json') {
    const out = rows.map((r) => Object.fromEntries(columns.map((c) => [c, jsonValue((r as Record<string, Cell>)[c], c)])));
    return `${JSON.stringify(out, null, 2)}\n`;
  }
  const records = rows.map((r) => columns.map((c) => csvValue((r as Record<string, Cell>)[c], c)));
  return stringify(records, { header: true, columns: [...columns], record_delimiter: '\r\n' });
}

const isMinutes = (column: string): boolean => column.endsWith('_minutes');

function csvValue(v: Cell, column: string): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return isMinutes(column) ? roundMinutes(v).toFixed(MINUTE_DECIMALS) : String(v);
  return v;
}

function jsonValue(v: Cell, column: string): Cell {
  if (typeof v === 'number' && isMinutes(column)) return roundMinutes(v);
  return v ?? null;
}
