/**
 * A Map bounded to `max` entries, evicting the least recently set (or touched) one.
 *
 * Eviction uses one long-lived iterator instead of `keys().next()` on a fresh one: a V8 Map keeps
 * deleted entries as holes until it rehashes, and a fresh iterator walks every hole from the start
 * (tens of thousands per eviction at a bound of 100,000). A live iterator skips each hole once.
 * Entries behind the iterator have all been evicted, and a set or touch appends at the end, so
 * the iterator's next entry is always the oldest one.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();
  private cursor: Iterator<K> | undefined;

  constructor(readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  /** Sets `key` as the most recent entry, evicting the oldest beyond `max`. */
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.evictOldest();
  }

  /** Marks an existing entry as the most recent. */
  touch(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.cursor = undefined;
  }

  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }

  private evictOldest(): void {
    for (let tries = 0; tries < 2; tries++) {
      this.cursor ??= this.map.keys();
      const next = this.cursor.next();
      if (!next.done) {
        this.map.delete(next.value);
        return;
      }
      this.cursor = undefined;
    }
  }
}
