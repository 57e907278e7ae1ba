import { ContractViolation, WorkOrderMessage, parseContract } from '@trellis/contracts';
import { errorMessage, type Logger } from '@trellis/common';
import type { HandlerOutcome, IncomingMessage } from '@trellis/messaging';
import { isTransient, type ApplyWorkOrderUseCase } from '../orders/apply-work-order.usecase';
import { isSurveyOrder, type SurveyClusterUseCase } from '../facts/survey-cluster.usecase';

export class WorkerHandlers {
  constructor(
    private readonly apply: ApplyWorkOrderUseCase,
    private readonly logger: Logger,
    private readonly afterApply: (order: WorkOrderMessage) => void,
    private readonly survey: SurveyClusterUseCase | null = null,
  ) {}

  /**
   * A work order: applied to Nova, then acked. Invalid orders are dead-lettered with the reason;
   * Nova being unreachable is retried (the delivery limit dead-letters an order that never goes
   * through, and `trellis replay` sends it again once Nova is back).
   */
  async onWorkOrder(message: IncomingMessage): Promise<HandlerOutcome> {
    if (message.parseError) return { kind: 'dead-letter', reason: `message body is not JSON: ${message.parseError}` };
    try {
      const order = parseContract(WorkOrderMessage, message.body);
      if (this.survey && isSurveyOrder(order)) {
        await this.survey.execute(order);
        return { kind: 'ack' };
      }
      await this.apply.execute(order, { redelivered: message.redelivered || message.deliveryCount > 0 });
      this.afterApply(order);
      return { kind: 'ack' };
    } catch (e) {
      const outcome: HandlerOutcome =
        e instanceof ContractViolation || !isTransient(e)
          ? { kind: 'dead-letter', reason: errorMessage(e) }
          : { kind: 'retry', reason: errorMessage(e) };
      this.logger[outcome.kind === 'retry' ? 'warn' : 'error']('work order not applied', {
        message_id: message.messageId,
        outcome: outcome.kind,
        reason: errorMessage(e),
      });
      return outcome;
    }
  }
}
