import { inspect } from 'node:util';

const MASK = '***';

/**
 * An API key that cannot leak by accident: string conversion, JSON, and util.inspect (what
 * loggers and console.log use) all print `***`. Only `reveal()` gives the value, and the one
 * caller that needs it is the HTTP client setting the `apikey` header.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return MASK;
  }

  toJSON(): string {
    return MASK;
  }

  [inspect.custom](): string {
    return `Secret(${MASK})`;
  }
}

/** Replaces every occurrence of the secrets in `text` with `***`: a last line of defence for text
 * that came from elsewhere (an error message from a library, a response body echoed back). */
export function redact(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const s of secrets) {
    const v = s.reveal();
    // includes() first: every response body passes through here, and almost none holds the key.
    if (v.length >= 4 && out.includes(v)) out = out.split(v).join(MASK);
  }
  return out;
}

/**
 * `value` with the secrets masked in every string and key, for parsed JSON: a server that echoes the
 * key JSON-escaped (`\u0050…`, `\/`) slips past `redact` on the raw text, and is plain once parsed.
 * Returns `value` itself when nothing held a secret.
 */
export function redactStrings(value: unknown, secrets: readonly Secret[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const r = redactStrings(v, secrets);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  let changed = false;
  // fromEntries defines own properties, so a "__proto__" key stays data.
  const entries = Object.entries(value).map(([k, v]): [string, unknown] => {
    const rk = redact(k, secrets);
    const rv = redactStrings(v, secrets);
    if (rk !== k || rv !== v) changed = true;
    return [rk, rv];
  });
  return changed ? Object.fromEntries(entries) : value;
}
