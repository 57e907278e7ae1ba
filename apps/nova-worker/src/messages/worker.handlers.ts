import { WorkOrderMessage, parseContract } from '@trellis/contracts';
import { errorMessage, type Logger } from '@trellis/common';
import { errorToOutcome, type HandlerOutcome, type IncomingMessage } from '@trellis/messaging';
import { isDatabaseUnavailable } from '@trellis/persistence';
import { isTransient, type ApplyWorkOrderUseCase } from '../orders/apply-work-order.usecase';
import { isSurveyOrder, type SurveyClusterUseCase } from '../facts/survey-cluster.usecase';

export class WorkerHandlers {
  constructor(
    private readonly apply: ApplyWorkOrderUseCase,
    private readonly logger: Logger,
    private readonly afterApply: (order: WorkOrderMessage) => void,
    private readonly survey: SurveyClusterUseCase | null = null,
    /** waits (bounded) until the database answers again; see untilDatabaseAnswers */
    private readonly databaseBack: () => Promise<unknown> = async () => undefined,
  ) {}

  /**
   * A work order: applied to Nova, then acked. Invalid orders are dead-lettered with the reason.
   * Nova being unreachable does not come back here: the order stays in the database with its next
   * attempt (orders/retry-schedule.ts) and the message is acked; so is a delivery of an order another
   * worker holds (orders/order-lease.ts). What still throws is this worker's own trouble (the
   * database): retried, and should it last, the order's lease brings the order back (order-poller.ts).
   */
  async onWorkOrder(message: IncomingMessage): Promise<HandlerOutcome> {
    if (message.parseError) return { kind: 'dead-letter', reason: `message body is not JSON: ${message.parseError}`, reasonClass: 'invalid' };
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
      // what is not transient for this worker (orders/apply-work-order isTransient) can never succeed
      const outcome = errorToOutcome(e, { permanent: (error) => !isTransient(error), transient: isTransient });
      this.logger[outcome.kind === 'retry' ? 'warn' : 'error']('work order not applied', {
        message_id: message.messageId,
        outcome: outcome.kind,
        reason: errorMessage(e),
      });
      // held until the database is back, so its redelivery can succeed rather than dead-letter
      if (outcome.kind === 'retry' && isDatabaseUnavailable(e)) await this.databaseBack();
      return outcome;
    }
  }
}
