import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Exports and reports hold billing figures and user ids: owner-only, narrowed further by the umask. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Writes a file atomically (temp file + rename): a reader never sees a half-written export.
 * The temp file has a random name in the target's folder and is created exclusively ('wx'): a
 * predictable name let another local user plant a symlink there and have us write through it.
 */
export async function writeFileAtomic(path: string, text: string, opts: { createDir?: boolean } = {}): Promise<void> {
  if (opts.createDir) await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(12).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', PRIVATE_FILE_MODE);
  try {
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
