/**
 * What every answer to hostile input must look like (../shared/docs/senlin-api.md §1.3): never a
 * 5xx, and every 4xx in Senlin's error body, `{code, title, explanation, error: {code, message,
 * type}}` with the status in both codes.
 */

const nonEmpty = (v: unknown) => typeof v === 'string' && v.trim().length > 0;

/** What is wrong with Senlin's error object (`error: {code, message, type}`) of a `status` answer, or null. */
export function senlinErrorProblem(status: number, error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return 'no error object';
  const { code, message, type } = error as Record<string, unknown>;
  if (code !== status) return `error.code is ${JSON.stringify(code)}, not ${status}`;
  if (!nonEmpty(message)) return 'error.message is empty or not a string';
  if (!nonEmpty(type)) return 'error.type is empty or not a string';
  return null;
}

/** What is wrong with an HTTP answer to hostile input, or null when it is fine. */
export function httpAnswerProblem(answer: { status: number; contentType: string | undefined; body: Buffer }, method: string): string | null {
  const { status } = answer;
  if (status >= 500) return `answered ${status}`;
  if (status < 400 || method === 'HEAD') return null;
  if (!/^application\/json\b/.test(answer.contentType ?? '')) return `a ${status} with Content-Type ${answer.contentType ?? '(none)'}, not Senlin's JSON error body`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return `a ${status} whose body is not JSON`;
  }
  if (typeof body !== 'object' || body === null) return `a ${status} whose body is not an object`;
  if (body.code !== status) return `body.code is ${JSON.stringify(body.code)}, not ${status}`;
  if (!nonEmpty(body.title) || !nonEmpty(body.explanation)) return 'title or explanation missing';
  return senlinErrorProblem(status, body.error);
}

/** A request or answer shortened for a failure message. */
export function excerpt(text: string, max = 600): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

/** How often each operation answered each status: printed after a run, to see how deep the cases got. */
export class StatusTally {
  private readonly counts = new Map<string, Map<number, number>>();

  record(label: string, status: number): void {
    const byStatus = this.counts.get(label) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.counts.set(label, byStatus);
  }

  print(): void {
    const lines = [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, byStatus]) => `  ${label}: ${[...byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`);
    process.stdout.write(`fuzz: answers by operation and status\n${lines.join('\n')}\n`);
  }
}
