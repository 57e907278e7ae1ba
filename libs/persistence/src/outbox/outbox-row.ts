// Its own module so that the outbox and its in-process handoff both use it without importing each other.
/** A claimed outbox row as the relay reads it. */
export interface OutboxRow {
  /** bigint as a string */
  id: string;
  exchange: string;
  routing_key: string;
  message_id: string;
  type: string | null;
  correlation_id: string | null;
  payload: unknown;
  headers: Record<string, string | number | boolean> | null;
  attempts: number;
}
