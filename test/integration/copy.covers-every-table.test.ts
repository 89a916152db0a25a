import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { COPIED_TABLES, NOT_COPIED } from '../../src/store/copy-database.js';
import { openStore } from '../../src/store/connection.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { tempDir } from '../helpers/harness.js';

/**
 * `callsync copy` names its tables one by one (it must order parents before children and know each
 * key). A table a new migration adds would be silently left out of every copy: this pins the list to
 * the migrated schema, so adding an entity fails here until the copy knows about it.
 */
describe('copy knows every table of the schema', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('each table of a freshly migrated database is copied or deliberately left out', async () => {
    const store = await openStore(join(tmp.dir, 'schema.db'));
    try {
      await migrateToLatest(store.db);
      const tables = (await store.db.introspection.getTables())
        .filter((t) => !t.isView && !t.name.startsWith('kysely_'))
        .map((t) => t.name)
        .sort();
      const known = [...COPIED_TABLES.map((t) => t.name), ...Object.keys(NOT_COPIED)].sort();
      expect(known).toEqual(tables);
    } finally {
      await store.close();
    }
  });
});
