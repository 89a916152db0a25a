/**
 * Markup that is already safe to emit. Only `html`/`raw` make one, so a plain string can never
 * reach the page unescaped: uids, guids, call types and issue codes are stored as the service
 * sent them and may hold `<`, `&` or quotes.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What may be interpolated into `html`: text and numbers are escaped, SafeHtml is kept as is. */
export type HtmlValue = SafeHtml | string | number | null | undefined | readonly HtmlValue[];

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values alike (HTML and SVG). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

function render(v: HtmlValue): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(render).join('');
  // Numbers are escaped too: the renderer formats them first, and a stray string must not slip by.
  return escapeHtml(String(v));
}

/** Tagged template: `html\`<td>${uid}</td>\`` escapes `uid`; nested `html` results stay markup. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Trusted markup written in this codebase (the style sheet), never data. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
