/**
 * A JSON-like value with `map` applied to every string in it (object keys included): arrays and plain objects are
 * copied where something changed, and an object met twice (a run record shares each message among the calls that
 * sent it) is mapped once and stays one object, so a record of n rounds costs n, not n² (a `JSON.parse` of its
 * `JSON.stringify` wrote every call's whole dialog again, and `formatTranscript` compares messages by identity).
 */
export function mapStrings<T>(value: T, map: (text: string) => string): T {
  const done = new Map<object, unknown>();
  const visit = (item: unknown): unknown => {
    if (typeof item === "string") return map(item);
    if (item === null || typeof item !== "object") return item;
    if (done.has(item)) return done.get(item);
    let result: unknown = item;
    if (Array.isArray(item)) {
      const mapped = item.map(visit);
      if (mapped.some((entry, index) => !Object.is(entry, item[index]))) result = mapped;
    } else {
      const prototype: unknown = Object.getPrototypeOf(item);
      if (prototype === Object.prototype || prototype === null) {
        const entries = Object.entries(item).map(([key, entry]): [string, unknown] => [map(key), visit(entry)]);
        // Entries, not assignment: a key such as `__proto__` stays an own property of the copy.
        if (entries.some(([key, entry]) => !Object.hasOwn(item, key) || !Object.is(entry, (item as Record<string, unknown>)[key]))) result = Object.fromEntries(entries);
      }
    }
    done.set(item, result);
    return result;
  };
  return visit(value) as T;
}
