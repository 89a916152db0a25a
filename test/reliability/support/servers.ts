import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What a test server saw of one request: the request target exactly as received, and the key header. */
export interface SeenRequest {
  method: string;
  /** The raw request target (path and query), before any decoding. */
  url: string;
  apikey: string | undefined;
  headers: IncomingHttpHeaders;
}

export interface Reply {
  status: number;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
}

export interface TestServer {
  /** http://127.0.0.1:PORT */
  url: string;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A tiny node:http server on 127.0.0.1 and a free port, for payloads and behaviours the simulator
 * cannot produce. Every request is recorded; `close()` also drops keep-alive sockets.
 */
export async function startServer(handle: (req: SeenRequest, raw: IncomingMessage) => Reply | Promise<Reply>): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const key = req.headers.apikey;
    const seen: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '', apikey: Array.isArray(key) ? key.join(',') : key, headers: req.headers };
    requests.push(seen);
    req.resume();
    Promise.resolve()
      .then(() => handle(seen, req))
      .then(
        (reply) => {
          const body = reply.body ?? '';
          res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...reply.headers });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(599, { 'content-type': 'text/plain' });
          res.end(`test server handler failed: ${String(err)}`);
        },
      );
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Upstream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Forwards one request to `origin` (a 127.0.0.1 test server) and returns its whole answer. */
export function forward(origin: string, req: SeenRequest): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = { ...req.headers };
    delete headers.host;
    const out = httpRequest(`${origin}${req.url}`, { method: req.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end();
  });
}

/** The parts of an upstream answer worth passing on (framing headers are recomputed). */
export function relay(up: Upstream, body: string | Buffer = up.body): Reply {
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(up.headers)) {
    if (v !== undefined && !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) headers[k] = v;
  }
  return { status: up.status, headers, body };
}

/**
 * A proxy in front of the simulator: `intercept` sees every request with a function that forwards it,
 * and answers whatever it likes (the upstream answer, a rewritten one, or its own).
 */
export function startProxy(origin: string, intercept: (req: SeenRequest, pass: () => Promise<Upstream>) => Reply | Promise<Reply>): Promise<TestServer> {
  return startServer((req) => intercept(req, () => forward(origin, req)));
}

/** The path part of a request target, and its `page` query parameter (1 when absent). */
export function pathAndPage(url: string): { path: string; page: number } {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const page = Number(new URLSearchParams(q < 0 ? '' : url.slice(q + 1)).get('page') ?? '1');
  return { path, page: Number.isInteger(page) && page > 0 ? page : 1 };
}

/** Base URLs of a simulator app as seen through a proxy at `proxyUrl`. */
export function viaProxy(proxyUrl: string, appId: string, region = 'us'): { callsBaseUrl: string; chatBaseUrl: string } {
  return { callsBaseUrl: `${proxyUrl}/${appId}.call-${region}/v3`, chatBaseUrl: `${proxyUrl}/${appId}.api-${region}/v3` };
}
