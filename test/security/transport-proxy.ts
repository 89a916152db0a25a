import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { forward, relay, type SeenRequest, type Upstream } from '../reliability/support/servers.js';

/**
 * A proxy in front of the simulator that may answer a request itself at the socket level (stream a
 * body chunk by chunk, drip it, send raw bytes), which startServer's whole-body replies cannot.
 * `answer` returns true when it answered; otherwise the simulator's answer is relayed unchanged.
 */
export interface RawProxy {
  url: string;
  /** Request targets as received, in order. */
  readonly urls: string[];
  close(): Promise<void>;
}

export async function startRawProxy(
  origin: string,
  answer: (req: SeenRequest, res: ServerResponse, pass: () => Promise<Upstream>) => Promise<boolean>,
): Promise<RawProxy> {
  const urls: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((raw: IncomingMessage, res: ServerResponse) => {
    const key = raw.headers.apikey;
    const req: SeenRequest = { method: raw.method ?? 'GET', url: raw.url ?? '', apikey: Array.isArray(key) ? key.join(',') : key, headers: raw.headers };
    urls.push(req.url);
    raw.resume();
    const pass = (): Promise<Upstream> => forward(origin, req);
    answer(req, res, pass)
      .then(async (done) => {
        if (done) return;
        const reply = relay(await pass());
        const body = reply.body ?? '';
        res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      })
      .catch(() => res.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    urls,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The session id a Get Call target names, or undefined for any other request. */
export function getCallId(url: string): string | undefined {
  const m = /\/calls\/([^?]+)/.exec(url);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** Whether the target is a List Calls page. */
export const isListPage = (url: string): boolean => /\/calls(\?|$)/.test(url);
