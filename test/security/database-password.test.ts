import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { maskDatabaseUrl } from '../../src/store/destinations/index.js';
import { connectionString, displayUrl } from '../../src/store/destinations/postgres-connection.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, pgExec, testDialects } from '../helpers/databases.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig } from '../helpers/harness.js';

/**
 * Issue 13, point 2: the PostgreSQL password can stay out of the URL (databasePasswordEnv, or
 * PGPASSWORD), and wherever it comes from it is never printed. The test server trusts every local
 * connection, so a proxy in front of it asks each client for its password (in clear, the simplest
 * method) and records it before passing the session through: what the CLI sent is checked, not assumed.
 */
const postgres = (await testDialects()).includes('postgres');

const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** ErrorResponse as the server sends it. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0`), Buffer.from([0])]);
  return Buffer.concat([Buffer.from('E'), int32(fields.length + 4), fields]);
}

/** A TCP proxy to the real server that lets a session through only with `password`. */
class PasswordProxy {
  /** Every password a client sent, right or wrong. */
  readonly seen: string[] = [];
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(upstream: URL, password: string): Promise<PasswordProxy> {
    const seen: string[] = [];
    const server = net.createServer((client) => PasswordProxy.handle(client, upstream, password, seen));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const proxy = new PasswordProxy(server, (server.address() as net.AddressInfo).port);
    (proxy as { seen: string[] }).seen = seen;
    return proxy;
  }

  private static handle(client: net.Socket, upstream: URL, password: string, seen: string[]): void {
    let buf = Buffer.alloc(0);
    let startup: Buffer | undefined;
    let relaying = false;
    client.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      if (relaying) return;
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (!startup) {
          if (buf.length < 8 || buf.length < buf.readInt32BE(0)) return;
          const msg = buf.subarray(0, buf.readInt32BE(0));
          buf = buf.subarray(msg.length);
          const code = msg.readInt32BE(4);
          if (code === 80877103 || code === 80877104) {
            client.write('N'); // no SSL, no GSS encryption
            continue;
          }
          if (code === 80877102) {
            // CancelRequest: to the server as it is.
            const up = net.connect(Number(upstream.port || 5432), upstream.hostname, () => up.end(msg));
            up.on('error', () => undefined);
            client.end();
            return;
          }
          startup = Buffer.from(msg);
          client.write(Buffer.concat([Buffer.from('R'), int32(8), int32(3)])); // AuthenticationCleartextPassword
          continue;
        }
        if (buf.length < 5 || buf.length < 1 + buf.readInt32BE(1)) return;
        const len = buf.readInt32BE(1);
        const sent = buf.subarray(5, 1 + len - 1).toString('utf8');
        const rest = buf.subarray(1 + len);
        seen.push(sent);
        if (sent !== password) {
          client.end(errorResponse('28P01', 'password authentication failed'));
          return;
        }
        relaying = true;
        const up = net.connect(Number(upstream.port || 5432), upstream.hostname, () => {
          // The real server trusts us: its AuthenticationOk and the rest go straight to the client.
          up.write(startup!);
          if (rest.length) up.write(rest);
          client.pipe(up);
          up.pipe(client);
        });
        up.on('error', () => client.destroy());
        client.on('close', () => up.destroy());
        return;
      }
    });
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe('database URLs are shown without their password', () => {
  it('masks the password in the userinfo and in a password= parameter, and leaves SQLite paths alone', () => {
    expect(displayUrl('postgres://callsync:s3cr%40t@db.internal:5432/callsync')).toBe('postgres://callsync:***@db.internal:5432/callsync');
    expect(displayUrl('postgresql://u:p@[::1]/db')).toBe('postgresql://u:***@[::1]/db');
    expect(displayUrl('postgres://u@h/db?sslmode=require&password=hunter2')).toBe('postgres://u@h/db?sslmode=require&password=***');
    expect(displayUrl('postgres://u:hunter2@/db?host=/run/postgresql')).not.toContain('hunter2');
    expect(displayUrl('postgres://u@h:5432/db')).toBe('postgres://u@h:5432/db');
    expect(displayUrl('postgres://u:hunter2@h:notaport/db')).toBe('postgres://(unparseable URL)');
    expect(maskDatabaseUrl('postgres://u:hunter2@h/db')).toBe('postgres://u:***@h/db');
    expect(maskDatabaseUrl('data/callsync.db')).toBe('data/callsync.db');
  });

  it('takes the password from the URL first, then from the databasePasswordEnv variable, exactly as written', () => {
    const odd = 'p@ss:w/rd%41 é?#&';
    const password = (url: string): string | undefined => (new pg.Client({ connectionString: url }) as unknown as { password?: string }).password;
    expect(password(connectionString('postgres://u@h/db', { passwordEnv: 'DB_PW', env: { DB_PW: odd } }))).toBe(odd);
    expect(password(connectionString('postgres://u@/db?host=/run/postgresql', { passwordEnv: 'DB_PW', env: { DB_PW: odd } }))).toBe(odd);
    expect(connectionString('postgres://u:inurl@h/db', { passwordEnv: 'DB_PW', env: { DB_PW: odd } })).toBe('postgres://u:inurl@h/db');
    expect(connectionString('postgres://u@h/db', {})).toBe('postgres://u@h/db');
    expect(() => connectionString('postgres://u@h/db', { passwordEnv: 'DB_PW', env: {} })).toThrow('database postgres://u@h/db: environment variable DB_PW (databasePasswordEnv) is not set; export the database password in it');
  });
});

describe.runIf(postgres)('the PostgreSQL password comes from the environment and never shows', () => {
  const PW = `pw-${randomBytes(9).toString('hex')}-RECOGNISABLE`;
  const PW_ENV = 'CALLSYNC_TEST_DB_PW';
  const tmp = tempDir();
  const dbs = databaseFactory('postgres', tmp.dir);
  const READER = `cs_pwreader_${randomBytes(4).toString('hex')}`;
  let sim: Simulator;
  let proxy: PasswordProxy;
  let direct: string;
  /** The database through the proxy, as `user`, without a password. */
  let viaProxy: (user?: string, password?: string) => string;
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ [KEY_ENV]: TEST_KEY, ...extra });
  const noPassword = (r: { stdout: string; stderr: string }): void => {
    expect(r.stdout).not.toContain(PW);
    expect(r.stderr).not.toContain(PW);
    expect(r.stdout + r.stderr).not.toContain(encodeURIComponent(PW));
  };

  const admin = (text: string, url = direct): Promise<void> => pgExec(url, text);

  beforeAll(async () => {
    direct = await dbs.fresh('password');
    const upstream = new URL(direct);
    proxy = await PasswordProxy.start(upstream, PW);
    viaProxy = (user = 'postgres', password) => {
      const u = new URL(direct);
      u.hostname = '127.0.0.1';
      u.port = String(proxy.port);
      u.username = user;
      if (password) u.password = encodeURIComponent(password);
      return u.toString();
    };
    await admin(`create role ${READER} login in role pg_read_all_data`);
    sim = await startTestSim(300);
  });
  afterAll(async () => {
    await sim.close();
    await proxy.close();
    await dbs.dropAll();
    const maintenance = new URL(direct);
    maintenance.pathname = '/postgres';
    await admin(`drop role if exists ${READER}`, maintenance.toString());
    tmp.cleanup();
  });

  it('a URL without a password connects with the databasePasswordEnv variable; config check, sync, status and query never print it', async () => {
    const cfg = join(tmp.dir, 'env.config.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], viaProxy(), { databasePasswordEnv: PW_ENV })));
    const before = proxy.seen.length;

    const check = await runCli(['config', 'check', '--config', cfg], env({ [PW_ENV]: PW }));
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ database: viaProxy(), databasePasswordEnv: PW_ENV });
    noPassword(check);

    const sync = await runCli(['sync', '--config', cfg, '--log-level', 'trace'], env({ [PW_ENV]: PW }));
    expect(sync.code).toBe(0);
    noPassword(sync);
    expect(proxy.seen.length).toBeGreaterThan(before);
    expect(new Set(proxy.seen.slice(before))).toEqual(new Set([PW]));

    // status takes the password from PGPASSWORD here (pg reads it for a URL without one).
    const status = await runCli(['status', '--database', viaProxy(), '--format', 'json'], env({ PGPASSWORD: PW }));
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as { apps: { calls: number }[] }).apps[0]!.calls).toBe(sim.truth('app1').calls.size);
    noPassword(status);

    const qcfg = join(tmp.dir, 'reader.config.json');
    writeFileSync(qcfg, JSON.stringify(testConfig(sim, ['app1'], viaProxy(READER), { databasePasswordEnv: PW_ENV })));
    const query = await runCli(['query', '--config', qcfg, '--format', 'json', 'select count(*) as n from calls'], env({ [PW_ENV]: PW }));
    expect([query.code, query.stderr]).toEqual([0, '']);
    expect(JSON.parse(query.stdout)).toEqual([{ n: sim.truth('app1').calls.size }]);
    noPassword(query);
    expect(new Set(proxy.seen.slice(before))).toEqual(new Set([PW]));
  });

  it('a password in the URL is shown as *** by config check, migrate, status, sync and their errors', async () => {
    const withPw = viaProxy('postgres', PW);
    expect(withPw).toContain(encodeURIComponent(PW));
    const masked = withPw.replace(`:${encodeURIComponent(PW)}@`, ':***@');

    const cfg = join(tmp.dir, 'url.config.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], withPw)));
    const check = await runCli(['config', 'check', '--config', cfg], env());
    expect(check.code).toBe(0);
    expect((JSON.parse(check.stdout) as { database: string }).database).toBe(masked);
    noPassword(check);
    const flag = await runCli(['config', 'check', '--config', cfg, '--database', withPw], env());
    expect((JSON.parse(flag.stdout) as { database: string }).database).toBe(masked);
    noPassword(flag);

    const migrate = await runCli(['migrate', '--database', withPw], env());
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toContain(masked);
    noPassword(migrate);

    const sync = await runCli(['sync', '--config', cfg, '--log-level', 'trace'], env());
    expect(sync.code).toBe(0);
    noPassword(sync);
    const status = await runCli(['status', '--database', withPw], env());
    expect(status.code).toBe(0);
    noPassword(status);

    // Failures name the database too: a wrong password, and a server that does not answer.
    const wrong = `${PW}-but-wrong`;
    for (const url of [viaProxy('postgres', wrong), viaProxy('postgres', PW).replace(`:${proxy.port}/`, ':1/')]) {
      for (const args of [['status', '--database', url], ['query', '--database', url, 'select 1'], ['migrate', '--database', url]]) {
        const r = await runCli(args, env());
        expect(r.code).not.toBe(0);
        noPassword(r);
        expect(r.stdout + r.stderr).not.toContain('but-wrong');
      }
    }
  });

  it('a databasePasswordEnv whose variable is unset is one line naming the variable, before any connection', async () => {
    const cfg = join(tmp.dir, 'unset.config.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], viaProxy(), { databasePasswordEnv: PW_ENV })));
    const before = proxy.seen.length;
    const line = `environment variable ${PW_ENV} (databasePasswordEnv) is not set; export the database password in it`;
    const check = await runCli(['config', 'check', '--config', cfg], env());
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(line);
    const sync = await runCli(['sync', '--config', cfg], env());
    expect(sync.code).toBe(2);
    expect(sync.stderr.trim().split('\n')).toEqual([`callsync: database ${viaProxy()}: ${line}`]);
    expect(proxy.seen.length).toBe(before);
  });
});
