/**
 * Request-target parsing without regexes or URL objects (the hot path). The first path segment
 * stands for the host: `{appId}.call-{region}` (Calls API) or `{appId}.api-{region}` (Chat API),
 * mirroring `https://{appId}.call-{region}.cometchat.io/v3`.
 */
export type RouteKind = 'list' | 'get' | 'members' | 'stats' | 'other';

export interface RequestTarget {
  appId: string;
  region: string;
  api: 'calls' | 'chat';
  kind: RouteKind;
  /** Decoded sessionId (get) or guid (members); '' otherwise. */
  param: string;
  /** The raw query string without '?'. */
  query: string;
  /** The path parameter was not valid percent-encoding. */
  badParam: boolean;
}

const CALLS_HOST = '.call-';
const CHAT_HOST = '.api-';

function decode(raw: string): string | null {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** Null when the first segment names no API host at all. */
export function parseRequestTarget(url: string): RequestTarget | null {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  if (path.charCodeAt(0) !== 47 /* / */) return null;
  const slash = path.indexOf('/', 1);
  const host = slash < 0 ? path.slice(1) : path.slice(1, slash);
  const rest = slash < 0 ? '' : path.slice(slash);

  let api: 'calls' | 'chat';
  let at = host.lastIndexOf(CALLS_HOST);
  let marker = CALLS_HOST;
  if (at >= 0) api = 'calls';
  else {
    at = host.lastIndexOf(CHAT_HOST);
    marker = CHAT_HOST;
    if (at < 0) return null;
    api = 'chat';
  }
  const target: RequestTarget = {
    appId: host.slice(0, at),
    region: host.slice(at + marker.length),
    api,
    kind: 'other',
    param: '',
    query,
    badParam: false,
  };
  if (!rest.startsWith('/v3/')) return target;
  const sub = rest.slice(3);

  if (api === 'calls') {
    if (sub === '/calls') target.kind = 'list';
    else if (sub.startsWith('/calls/')) {
      // Everything after /calls/ is the id: an encoded id may decode to contain '/'.
      const raw = sub.slice(7);
      if (raw.includes('/')) return target;
      const id = decode(raw);
      target.kind = 'get';
      if (id === null) target.badParam = true;
      else target.param = id;
    }
    return target;
  }
  if (sub === '/stats') target.kind = 'stats';
  else if (sub.startsWith('/groups/') && sub.endsWith('/members')) {
    const raw = sub.slice(8, sub.length - 8);
    if (raw.length === 0 || raw.includes('/')) return target;
    const guid = decode(raw);
    target.kind = 'members';
    if (guid === null) target.badParam = true;
    else target.param = guid;
  }
  return target;
}
