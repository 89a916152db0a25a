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
  // csv-stringify quotes a field holding the whole record delimiter (CRLF) but not a lone CR or LF,
  // which spreadsheets and many parsers take as a row break: any CR or LF is quoted.
  return stringify(records, { header: true, columns: [...columns], record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
}

const isMinutes = (column: string): boolean => column.endsWith('_minutes');

/**
 * Leading characters that make a spreadsheet read a cell as a formula (OWASP, CSV Injection):
 * `=`, `+`, `-`, `@`, and tab and CR, which some spreadsheets skip before looking for one.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Text from the service (type, status, session ids, uids) lands in CSV cells that finance opens in a
 * spreadsheet; a cell such as `=HYPERLINK(...)` would run there. Such text gets a leading `'`,
 * which spreadsheets show as text and do not evaluate. Numbers we format ourselves are left alone:
 * a negative delta must stay a number.
 */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

function csvValue(v: Cell, column: string): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return isMinutes(column) ? roundMinutes(v).toFixed(MINUTE_DECIMALS) : String(v);
  return neutraliseFormula(v);
}

function jsonValue(v: Cell, column: string): Cell {
  if (typeof v === 'number' && isMinutes(column)) return roundMinutes(v);
  return v ?? null;
}
