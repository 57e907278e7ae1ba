import { engineClaims, overlappingRuns, workerClaims, type ActionRun } from './replica-checks';

const run = (id: string, over: Partial<ActionRun> = {}): ActionRun => ({
  id,
  cluster_id: 'c1',
  action: 'CLUSTER_SCALE_OUT',
  status: 'SUCCEEDED',
  owner: 'engine-a',
  attempts: 1,
  decisions: 1,
  start_time: 10,
  end_time: 11,
  ...over,
});
const line = (msg: string, fields: Record<string, unknown>) => JSON.stringify({ time: 't', level: 'info', msg, ...fields });

describe('the replica test checks', () => {
  describe('one engine per action', () => {
    const logs = {
      'engine-a': [line('action handled', { action_id: 'a1', kind: 'ordered' }), line('action handled', { action_id: 'a1', kind: 'duplicate' })].join('\n'),
      'engine-b': [line('action handled', { action_id: 'a2', kind: 'finished' }), '{"cut short by SIG'].join('\n'),
    };

    it('pass an action decided once by the engine that owns it, counting each engine', () => {
      const found = engineClaims([run('a1'), run('a2', { owner: 'engine-b' }), run('a3', { owner: 'engine-b' })], logs);
      expect(found).toEqual({ perInstance: { 'engine-a': 1, 'engine-b': 2 }, violations: [] });
    });

    it('find an action decided twice, by two engines, by an unknown owner, or with two decision rows', () => {
      const twice = { ...logs, 'engine-b': `${logs['engine-b']}\n${line('action handled', { action_id: 'a1', kind: 'ordered' })}` };
      const found = engineClaims(
        [run('a1'), run('a2', { owner: 'engine-b', attempts: 2 }), run('a3', { owner: 'engine-z' }), run('a4', { owner: null, decisions: 2 })],
        twice,
      );
      expect(found.violations).toEqual([
        { action_id: 'a1', why: 'engines engine-a, engine-b each logged deciding it' },
        { action_id: 'a2', why: 'decided 2 times' },
        { action_id: 'a3', why: 'owner engine-z is not one of the engines' },
        { action_id: 'a4', why: 'owner null is not one of the engines' },
        { action_id: 'a4', why: '2 decision rows' },
      ]);
    });

    it('find an owner that is not the engine that logged the decision', () => {
      expect(engineClaims([run('a2')], logs).violations).toEqual([{ action_id: 'a2', why: 'owner engine-a but engine-b logged deciding it' }]);
    });
  });

  describe('one worker per work order', () => {
    const applied = (id: string) => line('work order applied', { action_id: id, created: 1 });

    it('count each worker, and take an order applied by a killed worker and then another as a takeover', () => {
      const found = workerClaims({ 'w-1': [applied('a1'), applied('a2')].join('\n'), 'w-2': applied('a2') }, ['w-1']);
      expect(found.perInstance).toEqual({ 'w-1': 2, 'w-2': 1 });
      expect(found.violations).toEqual([]);
      expect(found.takeovers).toEqual([{ action_id: 'a2', by: ['w-1', 'w-2'] }]);
    });

    it('find an order two live workers applied, or one worker twice', () => {
      const found = workerClaims({ 'w-1': [applied('a1'), applied('a2'), applied('a2')].join('\n'), 'w-2': applied('a1') }, []);
      expect(found.violations).toEqual([
        { action_id: 'a1', why: 'workers w-1, w-2 each applied it' },
        { action_id: 'a2', why: 'workers w-1, w-1 each applied it' },
      ]);
    });
  });

  describe('one action of a cluster at a time', () => {
    it('pass back-to-back actions, and actions of different clusters at once', () => {
      expect(overlappingRuns([run('a1', { start_time: 10, end_time: 12 }), run('a2', { start_time: 12, end_time: 13 }), run('b1', { cluster_id: 'c2', start_time: 11, end_time: 14 })])).toEqual([]);
    });

    it('find two running at once, whatever order the rows come in, and one still running', () => {
      expect(
        overlappingRuns([
          run('a2', { start_time: 11.5, end_time: 13 }),
          run('a1', { start_time: 10, end_time: 12 }),
          run('a3', { start_time: 20, end_time: null }),
          run('a4', { start_time: 21, end_time: 22 }),
        ]),
      ).toEqual([
        { cluster: 'c1', first: 'a1', second: 'a2' },
        { cluster: 'c1', first: 'a3', second: 'a4' },
      ]);
    });
  });
});
