import { ActionRequestedMessage, WorkResultMessage, parseContract } from '@trellis/contracts';
import type { Logger } from '@trellis/common';
import { errorToOutcome, type HandlerOutcome, type IncomingMessage } from '@trellis/messaging';
import { isDatabaseUnavailable } from '@trellis/persistence';
import { ActionGone, type RunActionUseCase } from '../actions/run-action.usecase';
import type { ApplyWorkResultUseCase } from '../results/apply-work-result.usecase';

/**
 * Maps what happened to a message onto the bus (libs/messaging errorToOutcome): success → ack; a
 * message that can never succeed (invalid, or pointing at an action that is gone) → dead-letter with
 * the reason; anything else → retry, which the queue's delivery limit turns into a dead-letter if it
 * keeps failing.
 */
export function outcomeOf(error: unknown): HandlerOutcome {
  return errorToOutcome(error, { permanent: (e) => e instanceof ActionGone, transient: isDatabaseUnavailable });
}

export class EngineHandlers {
  constructor(
    private readonly runAction: RunActionUseCase,
    private readonly applyResult: ApplyWorkResultUseCase,
    private readonly logger: Logger,
    /** waits (bounded) until the database answers again; see untilDatabaseAnswers */
    private readonly databaseBack: () => Promise<unknown> = async () => undefined,
  ) {}

  async onActionRequested(message: IncomingMessage): Promise<HandlerOutcome> {
    return this.guard(message, async () => {
      await this.runAction.execute(parseContract(ActionRequestedMessage, message.body));
    });
  }

  async onWorkResult(message: IncomingMessage): Promise<HandlerOutcome> {
    return this.guard(message, async () => {
      await this.applyResult.execute(parseContract(WorkResultMessage, message.body));
    });
  }

  private async guard(message: IncomingMessage, work: () => Promise<void>): Promise<HandlerOutcome> {
    if (message.parseError) return { kind: 'dead-letter', reason: `message body is not JSON: ${message.parseError}`, reasonClass: 'invalid' };
    try {
      await work();
      return { kind: 'ack' };
    } catch (e) {
      const outcome = outcomeOf(e);
      this.logger[outcome.kind === 'retry' ? 'warn' : 'error']('message not handled', {
        queue: message.queue,
        message_id: message.messageId,
        outcome: outcome.kind,
        reason: (outcome as { reason: string }).reason,
      });
      // held until the database is back, so its redelivery can succeed rather than dead-letter
      if (outcome.kind === 'retry' && isDatabaseUnavailable(e)) await this.databaseBack();
      return outcome;
    }
  }
}
