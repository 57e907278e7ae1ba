/**
 * A JSON value of type `T` held as its text, exactly as `JSON.stringify(value, sortKeys)` writes
 * it (compact, keys sorted), so that an answer can carry it unparsed: `sortedJsonText` splices the
 * text in. PostgreSQL writes a cluster's node ids as such a text (`array_to_json`); parsing a page's
 * 10,000 ids into strings only to write them out again, and collecting those strings, was most of
 * what a page of 100 clusters cost the gateway (docs/benchmarks-history.md, big-clusters, session 8).
 *
 * Whatever else serialises it (`JSON.stringify`, toWireJson for RPC answers and stored idempotent
 * answers) gets the parsed value through `toJSON`.
 */
export class JsonText<T> {
  /** never set: carries `T` for the compiler */
  declare private readonly of?: T;

  constructor(readonly text: string) {}

  toJSON(): T {
    return JSON.parse(this.text) as T;
  }
}
