import type { Evaluator } from '@trellis/decisions';
import { chainLengthLabel, decisionDuration, secondsSince } from '@trellis/observability';

/**
 * The evaluator with each hook's evaluation timed (trellis_decision_duration_seconds, by hook and
 * the length of the cluster's policy chain). The decision itself is the evaluator's, untouched.
 */
export function timedEvaluator(evaluator: Evaluator): Evaluator {
  return {
    ...evaluator,
    evaluate: (input, options) => {
      const started = process.hrtime.bigint();
      try {
        return evaluator.evaluate(input, options);
      } finally {
        decisionDuration.observe({ hook: input.hook ?? 'none', chain_length: chainLengthLabel(input.policies?.length ?? 0) }, secondsSince(started));
      }
    },
  };
}
