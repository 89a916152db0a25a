import { closest, distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { looksLikeKey } from './key-shape.js';
import { AppConfigSchema, ConfigFileSchema } from './schema.js';

/**
 * Zod's issues in plain words: "apps[0].region: must be one of us, eu, in (got "uk")" rather than
 * "Invalid option: expected one of "us"|"eu"|"in"". What a field expects is read from the schema
 * itself (its type, range, options), so a changed limit changes the message with it.
 */

/** The parts of a zod schema node this file reads (zod 4's public `_zod.def` and number bounds). */
interface SchemaNode {
  _zod: {
    def: {
      type: string;
      innerType?: SchemaNode;
      shape?: Record<string, SchemaNode>;
      element?: SchemaNode;
      entries?: Record<string, string | number>;
      options?: readonly SchemaNode[];
      values?: readonly unknown[];
      checks?: readonly { _zod: { def: { check: string; value?: unknown; inclusive?: boolean; minimum?: unknown } } }[];
    };
  };
  isInt?: boolean;
}

export const pathText = (path: readonly PropertyKey[]): string =>
  path.length ? path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(top level)';

const WRAPPERS = new Set(['default', 'optional', 'prefault', 'nullable', 'readonly', 'catch']);

function unwrap(node: SchemaNode | undefined): SchemaNode | undefined {
  let n = node;
  while (n && WRAPPERS.has(n._zod.def.type) && n._zod.def.innerType) n = n._zod.def.innerType;
  return n;
}

/** The schema node at a config path (array indexes step into the element), or undefined. */
function schemaAt(path: readonly PropertyKey[]): SchemaNode | undefined {
  let node = unwrap(ConfigFileSchema as unknown as SchemaNode);
  for (const key of path) {
    if (!node) return undefined;
    const def = node._zod.def;
    if (def.type === 'array' && typeof key === 'number') node = unwrap(def.element);
    else if (def.type === 'object' && typeof key === 'string') node = unwrap(def.shape?.[key]);
    else return undefined;
  }
  return node;
}

/** Known keys at a config path, for "did you mean". */
function knownKeys(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(ConfigFileSchema.shape);
  if (path[0] === 'apps') return Object.keys(AppConfigSchema.shape);
  const node = schemaAt(path);
  return node?._zod.def.type === 'object' ? Object.keys(node._zod.def.shape ?? {}) : [];
}

/** A number's range from its checks: "a whole number from 1 to 64", "a number ≥ 0". */
function numberText(node: SchemaNode): string {
  let min: number | undefined;
  let max: number | undefined;
  let minExclusive = false;
  let maxExclusive = false;
  for (const c of node._zod.def.checks ?? []) {
    const d = c._zod.def;
    if (d.check === 'greater_than' && typeof d.value === 'number') [min, minExclusive] = [d.value, !d.inclusive];
    if (d.check === 'less_than' && typeof d.value === 'number') [max, maxExclusive] = [d.value, !d.inclusive];
  }
  const int = node.isInt === true;
  // A whole number above 0 is one of at least 1: said that way.
  if (int && min !== undefined && minExclusive) [min, minExclusive] = [Math.floor(min) + 1, false];
  if (int && max !== undefined && maxExclusive) [max, maxExclusive] = [Math.ceil(max) - 1, false];
  const kind = int ? 'a whole number' : 'a number';
  if (min !== undefined && max !== undefined && !minExclusive && !maxExclusive) return `${kind} from ${min} to ${max}`;
  const parts = [min !== undefined ? `${minExclusive ? '>' : '≥'} ${min}` : '', max !== undefined ? `${maxExclusive ? '<' : '≤'} ${max}` : ''].filter(Boolean);
  return parts.length ? `${kind} ${parts.join(' and ')}` : kind;
}

function optionsOf(node: SchemaNode): string[] {
  return Object.values(node._zod.def.entries ?? {}).map(String);
}

/** What a field takes, in words; undefined when the schema says nothing useful. */
function expectation(node: SchemaNode | undefined): string | undefined {
  if (!node) return undefined;
  switch (node._zod.def.type) {
    case 'number':
      return numberText(node);
    case 'enum':
      return `one of ${optionsOf(node).join(', ')}`;
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a text value in quotes';
    case 'array':
      return 'a list [ … ]';
    case 'object':
      return 'an object { … }';
    case 'literal':
      return (node._zod.def.values ?? []).map((v) => JSON.stringify(v)).join(' or ');
    case 'union': {
      // requestsPerMinute: "a whole number from 1 to 100000 or "unlimited"".
      const parts = (node._zod.def.options ?? []).map((o) => expectation(unwrap(o)));
      return parts.every((p) => p !== undefined) ? parts.join(' or ') : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Fields whose value is never quoted back: a database URL may hold a password, a key variable's name
 * field may hold a pasted key, a base URL may carry credentials.
 */
const NEVER_ECHOED = new Set(['database', 'apiKeyEnv', 'databasePasswordEnv', 'callsBaseUrl', 'chatBaseUrl', 'appId']);

/**
 * Fields whose value is always quoted back (up to 80 characters): a schedule is no secret, and a
 * refused cron expression is hard to fix unseen ("0 2 * * Monday" read "(got a text value)").
 */
const ALWAYS_ECHOED = new Set(['cron', 'timezone']);

/** The value received, short and only where it cannot be a secret: `(got "uk")`, `(got 0)`. */
function got(issue: z.core.$ZodIssue): string {
  const field = issue.path[issue.path.length - 1];
  if (typeof field === 'string' && NEVER_ECHOED.has(field)) return '';
  const input: unknown = (issue as { input?: unknown }).input;
  if (typeof field === 'string' && ALWAYS_ECHOED.has(field) && typeof input === 'string' && input.length <= 80) return ` (got ${JSON.stringify(input)})`;
  if (typeof input === 'number' || typeof input === 'boolean') return ` (got ${String(input)})`;
  if (input === null) return ' (got null)';
  if (typeof input === 'string') {
    // Short words only: anything long, or mixing letters and digits at length, might be a key.
    if (input.length > 24 || (input.length > 12 && /[0-9].*[A-Za-z]|[A-Za-z].*[0-9]/.test(input))) return ' (got a text value)';
    return ` (got ${JSON.stringify(input)})`;
  }
  if (Array.isArray(input)) return input.length ? ' (got a list)' : ' (got an empty list)';
  if (typeof input === 'object') return ' (got an object)';
  return '';
}

/** Zod's own wording starts like this; a message written in schema.ts is already plain. */
const ZOD_WORDING = /^(Invalid|Too (small|big)|Expected|Unrecognized)/;

/** One issue as "<where>: <what is wrong> (got …)", without the source prefix. */
function issueText(issue: z.core.$ZodIssue): string {
  const where = pathText(issue.path);
  const node = schemaAt(issue.path);
  const wants = expectation(node);
  const input: unknown = (issue as { input?: unknown }).input;
  if (issue.path.length === 1 && issue.path[0] === 'apps' && (input === undefined || (Array.isArray(input) && input.length === 0))) {
    return input === undefined ? 'apps: required: list at least one app ({ "appId", "region", "apiKeyEnv" })' : 'apps: list at least one app ({ "appId", "region", "apiKeyEnv" }) (got an empty list)';
  }
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && input === undefined) return `${where}: required: ${wants ? `expected ${wants}` : 'add it'}`;
  if (!ZOD_WORDING.test(issue.message)) return `${where}: ${issue.message}${got(issue)}`;
  if (node?._zod.def.type === 'enum') return `${where}: must be one of ${optionsOf(node).join(', ')}${got(issue)}`;
  if (wants) return `${where}: expected ${wants}${got(issue)}`;
  return `${where}: ${issue.message}${got(issue)}`;
}

/**
 * Every issue in plain words, one line each, prefixed by where the value came from: the environment
 * variable or flag that set it, else the config file.
 */
export function describeIssue(source: string, issue: z.core.$ZodIssue, origins: ReadonlyMap<string, string>): string {
  if (issue.code === 'unrecognized_keys') {
    const where = pathText(issue.path);
    const known = knownKeys(issue.path);
    const parts = issue.keys.map((k) => {
      // A key pasted as a field name is not printed back.
      if (looksLikeKey(k)) return '(a name that looks like an API key, not shown)';
      const near = known.length ? closest(k, known) : undefined;
      return near && distance(k, near) <= Math.max(2, Math.floor(near.length / 3)) ? `"${k}" (did you mean "${near}"?)` : `"${k}"`;
    });
    return `${source}: ${where}: unknown field ${parts.join(', ')}; remove it or fix its name (the fields are in the README)`;
  }
  const origin = origins.get(issue.path.map(String).join('.'));
  return `${origin ?? source}: ${issueText(issue)}`;
}
