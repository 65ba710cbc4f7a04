// A vulnerable variant as the audit takes it. Apart from fixtures/vulnerable/catalog.ts, which is data
// compiled into the package (scripts/build-fixtures.ts) and so may import nothing of the kit.
import type { VulnerableVariant } from "../../fixtures/vulnerable/catalog.js";
import { parseProtectPatterns } from "../../src/kit/operations/protected-paths.js";
import { type AuditTarget, loadTarget } from "../../src/kit/operations/target.js";

/** The variant's module as the audit takes it, with the protected paths its row names. */
export async function variantTarget(variant: Pick<VulnerableVariant, "module" | "protect">): Promise<AuditTarget> {
  const target = await loadTarget(`fixtures/vulnerable/${variant.module}.ts`);
  return variant.protect === undefined ? target : { ...target, protect: parseProtectPatterns(variant.protect, "--protect") };
}
