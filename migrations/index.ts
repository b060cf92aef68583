/**
 * Every migration, listed by hand so the migrator needs no filesystem scan (bundles and tests find them all).
 * Append new entries; names sort in the order they must run.
 */
import type { Migration } from 'kysely';
import { initial } from './0001-initial.ts';
import { steering } from './0002-steering.ts';
import { safety } from './0003-safety.ts';
import { typedBreakpoints } from './0004-typed-breakpoints.ts';
import { repeatSafeWrites } from './0005-repeat-safe-writes.ts';
import { reportDue } from './0006-report-due.ts';
import { runLeases } from './0007-run-leases.ts';
import { cachedTokens } from './0008-cached-tokens.ts';
import { tokenGrants } from './0009-token-grants.ts';
import { workflows } from './0010-workflows.ts';
import { runRoutes } from './0011-run-routes.ts';
import { assistants } from './0012-assistants.ts';
import { modelCost } from './0013-model-cost.ts';
import { brakes } from './0014-brakes.ts';
import { runParents } from './0015-run-parents.ts';
import { dashboard } from './0016-dashboard.ts';
import { dashboardRoles } from './0017-dashboard-roles.ts';
import { breakpointSuggestionsPref } from './0018-breakpoint-suggestions-pref.ts';
import { claimOps } from './0019-claim-ops.ts';
import { dashboardSessions } from './0020-dashboard-sessions.ts';
import { mcpConnectionSecrets } from './0021-mcp-connection-secrets.ts';
import { spendCaps } from './0022-spend-caps.ts';
import { mcpConnectLinks } from './0023-mcp-connect-links.ts';
import { connectLinkConfirmation } from './0024-connect-link-confirmation.ts';
import { serverQuestions } from './0025-server-questions.ts';
import { pendingConnectionExpiry } from './0026-pending-connection-expiry.ts';
import { stepProgress } from './0028-step-progress.ts';
import { brakeRaises } from './0029-brake-raises.ts';

/** All migrations by name, in the order they apply. */
export const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-steering': steering,
  '0003-safety': safety,
  '0004-typed-breakpoints': typedBreakpoints,
  '0005-repeat-safe-writes': repeatSafeWrites,
  '0006-report-due': reportDue,
  '0007-run-leases': runLeases,
  '0008-cached-tokens': cachedTokens,
  '0009-token-grants': tokenGrants,
  '0010-workflows': workflows,
  '0011-run-routes': runRoutes,
  '0012-assistants': assistants,
  '0013-model-cost': modelCost,
  '0014-brakes': brakes,
  '0015-run-parents': runParents,
  '0016-dashboard': dashboard,
  '0017-dashboard-roles': dashboardRoles,
  '0018-breakpoint-suggestions-pref': breakpointSuggestionsPref,
  '0019-claim-ops': claimOps,
  '0020-dashboard-sessions': dashboardSessions,
  '0021-mcp-connection-secrets': mcpConnectionSecrets,
  '0022-spend-caps': spendCaps,
  '0023-mcp-connect-links': mcpConnectLinks,
  '0024-connect-link-confirmation': connectLinkConfirmation,
  '0025-server-questions': serverQuestions,
  '0026-pending-connection-expiry': pendingConnectionExpiry,
  '0028-step-progress': stepProgress,
  '0029-brake-raises': brakeRaises,
};
