import { openTestDatabase } from '@trellis/testing/database';
import { describeSummaryContract } from '../test/summary.contract';

describeSummaryContract('in-memory PGlite', () => openTestDatabase());
