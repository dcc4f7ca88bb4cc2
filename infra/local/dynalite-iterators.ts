/**
 * Imported for its effect, before dynalite serves anything (the local lab and the
 * test emulators). dynalite 4.0.0 reads LevelDB through streams made from
 * abstract-level iterators and, when a stream ends or is destroyed, closes the
 * iterator with `iterator.return()`; abstract-level 3 iterators have no return(),
 * only close(), so every Query and Scan left its iterator open. An open LevelDB
 * iterator pins the memtable and table files of its moment: the lab's memory grew
 * with every upload while the API was being read (found by
 * test/stress/burst.stress.ts), and each iterator stayed listed on the database.
 * Giving the iterators the return() dynalite calls closes them.
 */
import { createRequire } from 'node:module';

interface IteratorPrototype {
  close(): Promise<void>;
  return?: () => Promise<void>;
}

export interface AbstractLevelModule {
  AbstractLevel: { prototype: { attachResource(resource: object): void; detachResource(resource: object): void } };
  AbstractIterator: { prototype: object };
}

/** The abstract-level that dynalite's LevelDB (classic-level) and in-memory store (memory-level) are built on. */
export function abstractLevelOf(store: 'classic-level' | 'memory-level'): AbstractLevelModule {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const storePath =
    store === 'classic-level'
      ? createRequire(fromDynalite.resolve('level')).resolve(store)
      : fromDynalite.resolve(store);
  return createRequire(storePath)('abstract-level') as AbstractLevelModule;
}

for (const store of ['classic-level', 'memory-level'] as const) {
  // Key, value and entry iterators all share the prototype that holds close().
  const common = Object.getPrototypeOf(abstractLevelOf(store).AbstractIterator.prototype) as IteratorPrototype;
  if (typeof common.close !== 'function')
    throw new Error(
      `abstract-level under ${store} has no iterator close(): ` +
        'check infra/local/dynalite-iterators.ts against the installed dynalite',
    );
  if (typeof common.return !== 'function') {
    Object.defineProperty(common, 'return', {
      value: function (this: IteratorPrototype) {
        return this.close();
      },
      configurable: true,
      writable: true,
    });
  }
}

export {};
