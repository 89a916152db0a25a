/**
 * Network failures in words a user can act on. undici and Node report them by code
 * (ENOTFOUND, ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, CERT_HAS_EXPIRED, …): alone those name
 * neither the host nor what to check. Every code the client can meet is mapped here, in one place.
 */
export interface NetworkProblem {
  /** A few words for the live retry line: `connection refused`. */
  reason: string;
  /** The failure naming the host: `x.call-us.cometchat.io: connection refused`. */
  detail: string;
  /** What to check. */
  advice: string;
}

/** The first error code found on the error, its cause, or (connect to several addresses) its first inner error. */
export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const rec = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof rec.code === 'string' && rec.code !== 'UND_ERR') return rec.code;
    e = rec.cause ?? (Array.isArray(rec.errors) ? rec.errors[0] : undefined);
  }
  return undefined;
}

const TLS_CODE = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH|EPROTO$)/;

/** The whole attempt ran past requestTimeoutMs (our deadline, or undici's header/body timeout). */
export function timeoutProblem(host: string, timeoutMs: number, begun?: { statusCode: number; bytesIn: number }): NetworkProblem {
  const s = timeoutMs >= 1000 ? `${+(timeoutMs / 1000).toFixed(1)} s` : `${timeoutMs} ms`;
  // An answer that began and then trickled (a slow proxy, a throttled link) is not "no answer": that
  // sent its owner to check a host that was answering.
  if (begun && begun.statusCode > 0) {
    return {
      reason: `answer not complete within ${s}`,
      detail: `${host}: HTTP ${begun.statusCode} began but was not complete within ${s} (${begun.bytesIn} bytes of its body in; requestTimeoutMs)`,
      advice: 'the answer comes too slowly: check the network and any proxy between, or raise requestTimeoutMs',
    };
  }
  return {
    reason: `no answer within ${s}`,
    detail: `${host}: no answer within ${s} (requestTimeoutMs)`,
    advice: 'the service or a proxy is not answering; check callsBaseUrl and the network, or raise requestTimeoutMs',
  };
}

/** The connection failed after an answer had begun: not "no answer", which named a host that was answering. */
export function cutOffProblem(host: string, statusCode: number, bytesIn: number): NetworkProblem {
  return {
    reason: 'answer cut off',
    detail: `${host}: HTTP ${statusCode} began but the connection closed after ${bytesIn} bytes of its body`,
    advice: 'the service or a proxy dropped the connection mid-answer; check the network and any proxy between',
  };
}

export function describeNetworkError(err: unknown, host: string, timeoutMs: number): NetworkProblem {
  const code = errorCode(err);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return { reason: 'cannot resolve host (DNS)', detail: `cannot resolve host ${host} (DNS${code === 'EAI_AGAIN' ? ', temporary failure' : ''})`, advice: 'check the appId and region, or callsBaseUrl/chatBaseUrl' };
    case 'ECONNREFUSED':
      return { reason: 'connection refused', detail: `${host}: connection refused`, advice: 'nothing listens there: check callsBaseUrl/chatBaseUrl, the port and the proxy' };
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return { reason: 'connection closed by the server', detail: `${host}: the connection was closed before an answer`, advice: 'the service or a proxy dropped the connection; check the proxy and the network' };
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return { reason: 'cannot connect (timeout)', detail: `${host}: could not connect (timed out)`, advice: 'check the network, a firewall or the proxy, and callsBaseUrl' };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENETDOWN':
      return { reason: 'host unreachable', detail: `${host}: host unreachable (${code})`, advice: 'check the network connection and routes, or the proxy' };
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return timeoutProblem(host, timeoutMs);
    default:
      if (code && TLS_CODE.test(code)) {
        return { reason: `TLS error (${code})`, detail: `${host}: TLS handshake failed (${code})`, advice: 'check that callsBaseUrl points at the service over https, the system clock, and the CA of a TLS-inspecting proxy (NODE_EXTRA_CA_CERTS)' };
      }
      return { reason: `network error ${code ?? 'unknown'}`, detail: `${host}: network error (${code ?? (err instanceof Error ? err.name : 'unknown')})`, advice: 'check callsBaseUrl, the network and the proxy' };
  }
}
