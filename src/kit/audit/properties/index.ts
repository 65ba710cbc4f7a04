/** Every audit property, in report order: the field gate, the path gate (the check, then each operation's tools, an archive's extraction, then the entries they protect), the size gate, bash's limits, the calling layer, the limits, the chapter's texts. */
import type { AuditProperty } from "../runner/property.js";
import { agentAbort, agentProtocol } from "./agent-loop.js";
import { approvalBashDefault, approvalInput, approvalOrdering, approvalRefused } from "./approval-hook.js";
import { bashLimitsOutput, bashLimitsTimeout } from "./bash-limits.js";
import { containmentExtract } from "./archives.js";
import { containmentLossyName, containmentWorkspacePath } from "./containment.js";
import { OPERATION_PROPERTIES } from "./operations.js";
import { corpusGo, corpusMcp } from "./corpus.js";
import { faultsTools, faultsWorkspacePath } from "./faults.js";
import { conformanceFields, fieldsNulBytes, fieldsRootFromInput, fieldsTools } from "./fields.js";
import { faultsPermissions } from "./permissions.js";
import { isInsidePosix, isInsideWin32 } from "./is-inside.js";
import { limitsHardlink } from "./limits.js";
import { precisionWorkspacePath } from "./precision.js";
import { PROTECTED_PROPERTIES } from "./protected.js";
import { sequencesBash, sequencesRootSwap } from "./sequences.js";
import { sequencesInnerSwap } from "./inner-swap.js";
import { sequencesSwapInCall } from "./in-call-swap.js";
import { conformanceTruncation, truncationRead } from "./truncation.js";

export const PROPERTIES: readonly AuditProperty<unknown>[] = [
  fieldsTools,
  fieldsRootFromInput,
  fieldsNulBytes,
  isInsidePosix,
  isInsideWin32,
  containmentWorkspacePath,
  ...OPERATION_PROPERTIES,
  containmentExtract,
  ...PROTECTED_PROPERTIES,
  containmentLossyName,
  precisionWorkspacePath,
  faultsWorkspacePath,
  faultsTools,
  faultsPermissions,
  corpusGo,
  corpusMcp,
  sequencesBash,
  sequencesRootSwap,
  sequencesInnerSwap,
  sequencesSwapInCall,
  truncationRead,
  bashLimitsOutput,
  bashLimitsTimeout,
  approvalRefused,
  approvalBashDefault,
  approvalOrdering,
  approvalInput,
  agentProtocol,
  agentAbort,
  limitsHardlink,
  conformanceFields,
  conformanceTruncation,
];
