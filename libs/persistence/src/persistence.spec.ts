import { openTestDatabase } from '@trellis/testing/database';
import { describePersistenceContract } from '../test/persistence.contract';

describePersistenceContract('in-memory PGlite', () => openTestDatabase());
