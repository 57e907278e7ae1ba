import { startNovaSimulator } from '../../apps/nova-simulator/src/simulator';
import { describeNovaClientContract } from '../contract/nova-client.contract';

const base = {
  cloud: null,
  cloudsFile: null,
  authType: null,
  userId: null,
  userDomainId: null,
  projectId: null,
  projectDomainId: null,
  regionName: 'RegionOne',
  interface: 'public',
  applicationCredentialId: null,
  applicationCredentialName: null,
  applicationCredentialSecret: null,
  computeEndpoint: null,
  computeApiVersion: null,
  userDomainName: 'Default',
  projectDomainName: 'Default',
};

describeNovaClientContract('simulator', async () => {
  const sim = await startNovaSimulator({ buildDelayMs: 50 });
  return {
    settings: { ...base, authUrl: sim.authUrl, username: 'admin', password: 'admin', projectName: 'admin' },
    memberSettings: { ...base, authUrl: sim.authUrl, username: 'demo', password: 'demo', projectName: 'demo' },
    image: 'cirros-fake',
    flavor: 'm1.tiny',
    zones: ['az1', 'az2'],
    cleanup: () => sim.close(),
  };
});
