/** Every audit property, in report order: the field gate, the path gate, the size gate, bash's limits, the known limits, the chapter's texts. */
import type { AuditProperty } from "../property.js";
import { bashLimitsOutput, bashLimitsTimeout } from "./bash-limits.js";
import { containmentLossyName, containmentRead, containmentWorkspacePath, containmentWrite } from "./containment.js";
import { faultsTools, faultsWorkspacePath } from "./faults.js";
import { conformanceFields, fieldsNulBytes, fieldsRootFromInput, fieldsTools } from "./fields.js";
import { isInsidePosix, isInsideWin32 } from "./is-inside.js";
import { limitsHardlink } from "./limits.js";
import { precisionWorkspacePath } from "./precision.js";
import { sequencesBash, sequencesRootSwap } from "./sequences.js";
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
  containmentLossyName,
  precisionWorkspacePath,
  faultsWorkspacePath,
  faultsTools,
  sequencesBash,
  sequencesRootSwap,
  truncationRead,
  bashLimitsOutput,
  bashLimitsTimeout,
  limitsHardlink,
  conformanceFields,
  conformanceTruncation,
];
