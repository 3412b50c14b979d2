/**
 * A Map bounded to `max` entries, evicting the least recently used one: `get`, `set` and `touch`
 * count as a use (`peek` does not), so that an entry read often (an open circuit rejecting calls)
 * is never the one dropped.
 *
 * Eviction reads one long-lived iterator: a fresh one would walk every deleted entry a V8 Map keeps
 * until it rehashes. Entries behind it have all been evicted, and a use appends at the end, so its
 * next entry is always the oldest.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();
  private cursor: Iterator<K> | undefined;

  /**
   * `onEvict` is told of each entry dropped to stay within `max` (not of `delete` or `clear`).
   * `rank`, when given, says which entries may go to make room: the least recently used entry of
   * rank 0 goes first, else the least recently used of a finite rank; an entry of rank `Infinity`
   * never goes, and when every other entry is of that rank a new key is not stored (`set` and `add`
   * answer false): the map stays within `max`.
   */
  constructor(
    readonly max: number,
    private readonly onEvict?: (key: K, value: V) => void,
    private readonly rank?: (key: K, value: V) => number,
  ) {}

  get size(): number {
    return this.map.size;
  }

  /** Reads without counting as a use (for snapshots and checks that must not change the order). */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  /** Reads `key` and counts the read as a use: the entry becomes the most recent. */
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) this.touch(key, value);
    return value;
  }

  /**
   * Sets `key` as the most recent entry, making room beyond `max`; false when no entry could go
   * (the key is not stored), unless `force`: then the map holds one entry more than `max` until
   * one can go.
   */
  set(key: K, value: V, force = false): boolean {
    this.map.delete(key);
    if (!force) return this.add(key, value);
    this.map.set(key, value);
    if (this.map.size > this.max && this.rank !== undefined) this.evictRanked(key, true);
    else if (this.map.size > this.max) this.evictOldest();
    return true;
  }

  /** Sets a key known to be absent, making room beyond `max`; false when no entry could go. */
  add(key: K, value: V): boolean {
    this.map.set(key, value);
    if (this.map.size <= this.max) return true;
    if (this.rank === undefined) {
      this.evictOldest();
      return true;
    }
    return this.evictRanked(key);
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

  /** Drops the least recently used entry; false when the map is empty. */
  evictOldest(): boolean {
    for (let tries = 0; tries < 2; tries++) {
      this.cursor ??= this.map.keys();
      const next = this.cursor.next();
      if (!next.done) {
        const key = next.value;
        const value = this.map.get(key) as V;
        this.map.delete(key);
        this.onEvict?.(key, value);
        return true;
      }
      this.cursor = undefined;
    }
    return false;
  }

  /** Drops the least recently used entry of the lowest rank that may go (not `kept`), else `kept` itself: whether `kept` stays. */
  private evictRanked(kept: K, force = false): boolean {
    const rank = this.rank as (key: K, value: V) => number;
    let candidate: K | undefined;
    let found = false;
    for (const [key, value] of this.map) {
      if (key === kept) continue;
      const level = rank(key, value);
      if (level === 0) {
        candidate = key;
        found = true;
        break;
      }
      if (!found && level !== Number.POSITIVE_INFINITY) {
        candidate = key;
        found = true;
      }
    }
    if (!found && force) return true;
    const dropped = found ? (candidate as K) : kept;
    const value = this.map.get(dropped) as V;
    this.delete(dropped);
    this.cursor = undefined;
    if (found) this.onEvict?.(dropped, value);
    return found;
  }

  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }
}
