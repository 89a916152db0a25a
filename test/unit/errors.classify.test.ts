import { describe, expect, it } from 'vitest';
import { classify, readErrorBody } from '../../src/source/errors.js';
import { parseRetryAfter } from '../../src/source/http-client.js';

describe('error classification: body code first, HTTP status second', () => {
  it('lets the code win over the status', () => {
    expect(classify(404, 'AUTH_ERR_APIKEY_NOT_FOUND')).toBe('auth');
    expect(classify(200, 'ERR_TOO_MANY_REQUESTS')).toBe('rate_limited');
    expect(classify(400, 'ERR_CALL_SESSION_NOT_FOUND')).toBe('not_found');
    expect(classify(500, 'ERR_SUBSCRIPTION_EXPIRED')).toBe('account');
    expect(classify(418, 'AUTH_ERR_SOMETHING_NEW')).toBe('auth');
  });
  it('falls back to the status', () => {
    expect(classify(429, undefined)).toBe('rate_limited');
    expect(classify(503, undefined)).toBe('transient');
    expect(classify(401, undefined)).toBe('auth');
    expect(classify(403, undefined)).toBe('auth');
    expect(classify(404, undefined)).toBe('not_found');
    expect(classify(422, undefined)).toBe('client');
  });
  it('reads both error body shapes and survives non-JSON', () => {
    expect(readErrorBody('{"error":{"code":"X","message":"m"}}')).toEqual({ code: 'X', message: 'm' });
    expect(readErrorBody('{"code":"Y","message":"n","devMessage":"d","source":"s"}')).toEqual({ code: 'Y', message: 'n' });
    expect(readErrorBody('<html>502 Bad Gateway</html>')).toEqual({});
    expect(readErrorBody('null')).toEqual({});
  });
  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
