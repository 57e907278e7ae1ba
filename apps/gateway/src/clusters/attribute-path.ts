import { badRequest } from '@trellis/common';

/**
 * The JSONPath expressions `GET /v1/clusters/{id}/attrs/{path}` takes (Senlin parsed them with
 * jsonpath_rw): fields joined by dots (`details.status`, `data.placement.zone`), `$` for the root,
 * `*` for every field, `[n]` / `[*]` for list items, and quoted field names (`metadata.'a.b'`).
 */
type Step = { kind: 'field'; name: string } | { kind: 'any' } | { kind: 'index'; index: number } | { kind: 'each' };

export interface AttributePath {
  /** the values the path selects in a document, in document order */
  find(doc: unknown): unknown[];
}

const invalid = (why: string) => badRequest(`Invalid attribute path - ${why}`);

export function parseAttributePath(text: string): AttributePath {
  const steps: Step[] = [];
  let i = 0;
  let expectField = true;
  while (i < text.length) {
    const c = text[i];
    if (expectField) {
      if (c === '$' && i === 0) {
        i++;
      } else if (c === '*') {
        steps.push({ kind: 'any' });
        i++;
      } else if (c === "'" || c === '"') {
        const end = text.indexOf(c, i + 1);
        if (end < 0) throw invalid(`unterminated quoted field at ${i + 1}`);
        steps.push({ kind: 'field', name: text.slice(i + 1, end) });
        i = end + 1;
      } else {
        const m = /^[A-Za-z0-9_\-:@]+/.exec(text.slice(i));
        if (!m) throw invalid(`unexpected '${c}' at ${i + 1}`);
        steps.push({ kind: 'field', name: m[0] });
        i += m[0].length;
      }
      expectField = false;
    } else if (c === '.') {
      expectField = true;
      i++;
    } else if (c === '[') {
      const m = /^\[\s*(\*|\d+)\s*\]/.exec(text.slice(i));
      if (!m) throw invalid(`unexpected '${c}' at ${i + 1}`);
      steps.push(m[1] === '*' ? { kind: 'each' } : { kind: 'index', index: Number(m[1]) });
      i += m[0].length;
    } else {
      throw invalid(`unexpected '${c}' at ${i + 1}`);
    }
  }
  if (expectField) throw invalid('the path ends where a field is expected');
  return { find: (doc) => steps.reduce<unknown[]>((values, step) => values.flatMap((v) => apply(step, v)), [doc]) };
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function apply(step: Step, value: unknown): unknown[] {
  switch (step.kind) {
    case 'field':
      return isMap(value) && step.name in value ? [value[step.name]] : [];
    case 'any':
      return isMap(value) ? Object.values(value) : Array.isArray(value) ? value : [];
    case 'index':
      return Array.isArray(value) && step.index < value.length ? [value[step.index]] : [];
    case 'each':
      return Array.isArray(value) ? value : [];
  }
}
