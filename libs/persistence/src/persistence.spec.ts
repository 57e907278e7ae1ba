import { openTestDatabase } from '@trellis/testing/database';
import { describePersistenceContract } from './persistence.contract';

describePersistenceContract('in-memory PGlite', () => openTestDatabase());
