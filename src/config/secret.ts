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

/**
 * The texts a secret can come back as: itself, and the part of its base64 (and base64url) encoding
 * that its own bytes alone decide, at each of the three positions it can have inside a longer
 * encoded text (`Basic base64(user:key)`, a token echoed back). A hostile fake echoed the key
 * base64-encoded in an error body, and it reached calls.detail_error as it was. Computed once per
 * secret. The characters at the ends of an encoded echo that mix the key's first or last bits with
 * its neighbours' stay: at most a byte of the key, as the mask leaves a plain echo's surroundings.
 */
const echoFormsBySecret = new WeakMap<Secret, readonly string[]>();
/** Shorter encoded parts would be masked in ordinary text by chance. */
const MIN_ENCODED_FORM = 8;

function echoForms(secret: Secret): readonly string[] {
  let forms = echoFormsBySecret.get(secret);
  if (forms) return forms;
  const value = secret.reveal();
  const found = new Set<string>([value]);
  const bytes = Buffer.from(value, 'utf8');
  for (let before = 0; before < 3; before++) {
    const encoded = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64');
    // Characters carry 6 bits: with `before` bytes ahead of the key, the first before + 1 of them
    // hold some of those bytes' bits, and the last character past the key's last bit some of the next byte's.
    const core = encoded.slice(before === 0 ? 0 : before + 1, Math.floor((8 * (before + bytes.length)) / 6));
    if (core.length >= MIN_ENCODED_FORM) {
      found.add(core);
      found.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  forms = [...found];
  echoFormsBySecret.set(secret, forms);
  return forms;
}

/** Replaces every occurrence of the secrets in `text` with `***` (and their base64 forms, see
 * echoForms): a last line of defence for text that came from elsewhere (an error message from a
 * library, a response body echoed back). */
export function redact(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const s of secrets) {
    if (s.reveal().length < 4) continue;
    // includes() first: every response body passes through here, and almost none holds the key.
    for (const form of echoForms(s)) if (out.includes(form)) out = out.split(form).join(MASK);
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
