// What the race's test and sweep share: the targets of fixtures/race, in process and over MCP.
import { RACE_TWINS, RACE_VARIANTS } from "../../fixtures/race/catalog.js";
import { type AuditTarget, loadTarget, referenceTarget } from "../../src/kit/operations/target.js";

/** Every (module, property) claim of the catalogue, with whether it is held over MCP too. */
export const RACE_CLAIMS = RACE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => ({ module: `fixtures/race/${variant.module}.ts`, id, overMcp: variant.inProcessOnly === undefined })));

/** Every (twin, property) the catalogue names as correct. */
export const RACE_TWIN_CLAIMS = Object.entries(RACE_TWINS).flatMap(([id, twins]) => twins.map((twin) => ({ twin, id })));

/** The twin's target in process. */
export const twinTarget = (twin: string): Promise<AuditTarget> => (twin === "reference" ? referenceTarget() : loadTarget(twin));
