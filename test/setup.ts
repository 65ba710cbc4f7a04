// Property tests draw a random seed per run unless one is fixed. FC_SEED replays a failure in CI;
// under Stryker the seed must be fixed, because @fast-check/vitest puts the seed into each test's name
// and Stryker can only select tests whose names are stable between its dry run and its mutant runs.
import fc from "fast-check";

const fixedSeed = process.env.FC_SEED ?? (process.env.STRYKER_MUTATOR_WORKER === undefined ? undefined : "42");
if (fixedSeed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(fixedSeed) });
