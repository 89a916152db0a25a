/**
 * Error bodies. The service's shape is undocumented: the SDK declares a flat
 * `{code, message, devMessage, source}`, a sibling product wraps it in `{"error": {...}}`. The shape
 * alternates with the request sequence number so every client meets both.
 */
export function errorBody(code: string, message: string, seq: number, forceWrapped = false): string {
  const inner = { code, message, devMessage: message, source: 'ext-api' };
  return JSON.stringify(forceWrapped || seq % 2 === 0 ? { error: inner } : inner);
}

const HTML_REASON: Record<number, string> = { 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/** What a load balancer in front of the API answers: HTML, not JSON. */
export function htmlErrorBody(status: number): string {
  const reason = HTML_REASON[status] ?? 'Error';
  return `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n</body>\r\n</html>\r\n`;
}
