import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes a file atomically (temp file + rename): a reader never sees a half-written export. */
export async function writeFileAtomic(path: string, text: string, opts: { createDir?: boolean } = {}): Promise<void> {
  if (opts.createDir) await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}
