import { FLAVORS, SimulatorState, type CreateServerInput } from './simulator-state';
import { DEFAULT_TOPOLOGY } from './topology';

describe('SimulatorState over time', () => {
  let now = 1_000_000;
  const state = new SimulatorState({
    topology: DEFAULT_TOPOLOGY,
    buildDelayMs: 500,
    adminPassword: 'admin',
    demoPassword: 'demo',
    tokenLifetimeMs: 60_000,
    now: () => now,
  });
  const input = (over: Partial<CreateServerInput> = {}): CreateServerInput => ({
    name: 'vm',
    projectId: state.projectId('demo'),
    userId: 'u',
    flavor: FLAVORS[0],
    imageRef: 'a83c3c75-fc9c-4be2-aebf-735c080a4c25',
    metadata: {},
    keyName: null,
    userData: null,
    description: null,
    tags: [],
    zone: null,
    forcedHost: null,
    forcedNode: null,
    requestedHost: null,
    requestedNode: null,
    group: null,
    ...over,
  });

  it('builds for buildDelayMs, then is ACTIVE; a deleted server lingers as DELETED, then is gone', () => {
    const s = state.createServer(input());
    expect(state.status(s)).toBe('BUILD');
    now += 499;
    expect(state.status(s)).toBe('BUILD');
    now += 1;
    expect(state.status(s)).toBe('ACTIVE');
    state.deleteServer(s);
    expect(state.status(s)).toBe('DELETED');
    expect(state.server(s.id)).toBeDefined();
    now += 500;
    expect(state.server(s.id)).toBeUndefined();
  });

  it('shows a NoValidHost failure only after the build delay', () => {
    const s = state.createServer(input({ zone: 'az1', forcedHost: 'host-5' }));
    expect(state.status(s)).toBe('BUILD');
    now += 500;
    expect(state.status(s)).toBe('ERROR');
    expect(s.fault?.message).toBe('No valid host was found. There are not enough hosts available.');
  });

  it('expires tokens at the end of their lifetime', () => {
    const token = state.identity.authenticate({
      auth: { identity: { methods: ['password'], password: { user: { name: 'demo', domain: { id: 'default' }, password: 'demo' } } } },
    });
    expect(state.identity.resolve(token.id)).not.toBeNull();
    now += 60_000;
    expect(state.identity.resolve(token.id)).toBeNull();
  });
});
