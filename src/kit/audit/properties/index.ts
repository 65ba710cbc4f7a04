/** Every audit property, in report order: the field gate, the path gate, the size gate, the calling layer, the limits, the chapter's texts. */
import type { AuditProperty } from "../property.js";
import { agentAbort, agentProtocol } from "./agent-loop.js";
import { approvalBashDefault, approvalInput, approvalOrdering, approvalRefused } from "./approval-hook.js";
import { containmentRead, containmentWorkspacePath, containmentWrite } from "./containment.js";
import { faultsTools, faultsWorkspacePath } from "./faults.js";
import { conformanceFields, fieldsNulBytes, fieldsRootFromInput, fieldsTools } from "./fields.js";
import { isInsidePosix, isInsideWin32 } from "./is-inside.js";
import { limitsHardlink } from "./limits.js";
import { precisionWorkspacePath } from "./precision.js";
import { sequencesBash } from "./sequences.js";
import { conformanceTruncation, truncationRead } from "./truncation.js";

export const PROPERTIES: readonly AuditProperty<unknown>[] = [
  fieldsTools,
  fieldsRootFromInput,
  fieldsNulBytes,
  isInsidePosix,
  isInsideWin32,
  containmentWorkspacePath,
  containmentRead,
  containmentWrite,
  precisionWorkspacePath,
  faultsWorkspacePath,
  faultsTools,
  sequencesBash,
  truncationRead,
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
