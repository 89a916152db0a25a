import { describe, expect, it } from 'vitest';
import { describeNetworkError, errorCode } from '../../src/source/network-errors.js';

const coded = (code: string, extra: Record<string, unknown> = {}): Error => Object.assign(new Error(`x ${code}`), { code, ...extra });

describe('network errors in words', () => {
  it('finds the code on the error, its cause, or the first of several connect attempts', () => {
    expect(errorCode(coded('ECONNREFUSED'))).toBe('ECONNREFUSED');
    expect(errorCode(new TypeError('fetch failed', { cause: coded('ENOTFOUND') }))).toBe('ENOTFOUND');
    expect(errorCode(Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), {}))).toBe('ECONNREFUSED');
  });

  it.each([
    ['ENOTFOUND', /^cannot resolve host h\.call-us\.cometchat\.io \(DNS\)$/, /appId and region, or callsBaseUrl/],
    ['ECONNREFUSED', /^h\.call-us\.cometchat\.io: connection refused$/, /callsBaseUrl.*proxy/],
    ['UND_ERR_HEADERS_TIMEOUT', /^h\.call-us\.cometchat\.io: no answer within 30 s \(requestTimeoutMs\)$/, /requestTimeoutMs/],
    ['CERT_HAS_EXPIRED', /^h\.call-us\.cometchat\.io: TLS handshake failed \(CERT_HAS_EXPIRED\)$/, /NODE_EXTRA_CA_CERTS/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /TLS handshake failed/, /https/],
    ['ECONNRESET', /closed before an answer/, /proxy/],
  ])('%s names the host and what to check', (code, detail, advice) => {
    const p = describeNetworkError(coded(code), 'h.call-us.cometchat.io', 30_000);
    expect(p.detail).toMatch(detail);
    expect(p.advice).toMatch(advice);
    expect(p.detail + p.advice).not.toContain('UND_ERR');
  });
});
