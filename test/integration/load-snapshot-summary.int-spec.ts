import { openPostgresTestDatabase } from '@trellis/testing/database';
import { describeSummaryContract } from '../../libs/decisions/test/summary.contract';

// the summarised snapshot's SQL (zone counts, candidates ranked per zone) on PostgreSQL itself
describeSummaryContract('PostgreSQL', () => openPostgresTestDatabase());
