/**
 * Errors of the audit's own: a sandbox it could not make, reset or remove, a tree it could not lay
 * out. Never the target's doing, so never a finding against it.
 *
 * Promises: every `AuditFault` that `recordAuditFault` is given is answered, once, by the next
 * `takeAuditFaults`: the runner records one a case met instead of judging the case by it
 * (audit/runner/run.ts), a sandbox records the removal it could not finish (sandbox.ts), and the audit
 * ends with exit 2 naming them (audit/command/command.ts) unless a failure found stands.
 * Does not promise: to tell two audits in one process apart; the command takes them at its start and end.
 */
export class AuditFault extends Error {}

const recorded: string[] = [];

export function recordAuditFault(fault: AuditFault): void {
  recorded.push(fault.message);
}

/** The faults recorded since the last call, oldest first; the record is then empty. */
export function takeAuditFaults(): string[] {
  return recorded.splice(0);
}
