/**
 * The headers of a `WholeResponse`, from node:http's raw header list, read as `fetch`'s `Headers` reads them: names
 * in lower case, in order of name, repeated ones joined with ", " (`set-cookie` kept apart). Immutable, as a
 * response's headers are.
 */
export class ResponseHeaders implements Headers {
  #values = new Map<string, string>();
  #cookies: string[] = [];

  constructor(rawHeaders: readonly string[]) {
    for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
      const name = rawHeaders[index]!.toLowerCase();
      const value = rawHeaders[index + 1]!.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
      if (name === "set-cookie") this.#cookies.push(value);
      const previous = this.#values.get(name);
      this.#values.set(name, previous === undefined ? value : `${previous}, ${value}`);
    }
    this.#values = new Map([...this.#values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }

  getSetCookie(): string[] {
    return [...this.#cookies];
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const [name, value] of this.#values) {
      if (name === "set-cookie") for (const cookie of this.#cookies) yield [name, cookie];
      else yield [name, value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  append(): void {
    throw new TypeError("Headers are immutable");
  }

  set(): void {
    throw new TypeError("Headers are immutable");
  }

  delete(): void {
    throw new TypeError("Headers are immutable");
  }
}
