import { createLogger } from './logger';
import { currentOpenStackRequestId, withLogContext, withoutLogContext } from './log-context';

const ID = 'req-0b7cbe02-4f6a-4a9e-9d3f-5b0e2d9f1c11';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('test', 'debug', { service: 'engine' }, (line) => lines.push(JSON.parse(line)));
  return { lines, logger };
}

describe('log context', () => {
  it('puts the context on every line written inside it, across awaits and timers', async () => {
    const { lines, logger } = capture();
    await withLogContext({ correlation_id: ID, action_id: 'a1' }, async () => {
      logger.info('first');
      await new Promise((r) => setTimeout(r, 1));
      logger.child({ component: 'nova' }).warn('after a timer');
    });
    logger.info('outside');
    expect(lines.map((l) => [l.msg, l.correlation_id, l.action_id])).toEqual([
      ['first', ID, 'a1'],
      ['after a timer', ID, 'a1'],
      ['outside', undefined, undefined],
    ]);
  });

  it('keeps two pieces of work running at once apart', async () => {
    const { lines, logger } = capture();
    const work = (id: string, delay: number) =>
      withLogContext({ correlation_id: id }, async () => {
        await new Promise((r) => setTimeout(r, delay));
        logger.info(id);
      });
    await Promise.all([work('one', 5), work('two', 1)]);
    expect(lines.map((l) => [l.msg, l.correlation_id])).toEqual([
      ['two', 'two'],
      ['one', 'one'],
    ]);
  });

  it('lets a line name its own fields over the context, and a detached timer carry none', async () => {
    const { lines, logger } = capture();
    await withLogContext({ correlation_id: ID }, async () => {
      logger.info('explicit', { correlation_id: 'other' });
      await new Promise<void>((resolve) => withoutLogContext(() => setTimeout(() => (logger.info('detached'), resolve()), 1)));
    });
    expect(lines.map((l) => [l.msg, l.correlation_id])).toEqual([
      ['explicit', 'other'],
      ['detached', undefined],
    ]);
  });

  it('offers only a req-<uuid> correlation id as the OpenStack request id', () => {
    expect(withLogContext({ correlation_id: ID }, currentOpenStackRequestId)).toBe(ID);
    expect(withLogContext({ correlation_id: 'resume-0b7cbe02-4f6a-4a9e-9d3f-5b0e2d9f1c11' }, currentOpenStackRequestId)).toBeUndefined();
    expect(withLogContext({ correlation_id: 'req-not-a-uuid' }, currentOpenStackRequestId)).toBeUndefined();
    expect(currentOpenStackRequestId()).toBeUndefined();
  });
});
