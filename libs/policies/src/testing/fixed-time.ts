import { evaluate, type EvaluateOptions, type EvaluationInput, type EvaluationOutput } from '../evaluate';

/** The time tests decide at, unless a test sets its own `now` (evaluate() takes time as an input). */
export const TEST_NOW = '2026-01-01T00:00:00.000Z';

/** evaluate() at TEST_NOW when neither the input nor the options say what time it is */
export function evaluateAtTestTime(input: EvaluationInput, options: EvaluateOptions = {}): EvaluationOutput {
  return evaluate(input, { ...options, now: options.now ?? input?.now ?? TEST_NOW });
}
