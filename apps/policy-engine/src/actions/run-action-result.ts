// Apart from the use case so that the drift coordinator, which the use case calls, can name it too.

/** How handling one action request ended (the consumer acks on every kind). */
export type RunActionResult =
  | { kind: 'duplicate' }
  | { kind: 'not-runnable'; status: string }
  | { kind: 'reordered' }
  | { kind: 'finished'; status: string; reason: string }
  | { kind: 'ordered'; creates: number; deletes: number };
